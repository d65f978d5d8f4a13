-- Each rater's `judge` pseudonym in their batch (src/rating/judge-pseudonym.ts: HMAC of the batch's salt and the
-- rater's identity, neither of which ever changes), stored at consent: the console's participants page named all
-- 50,000 raters of a 1M-judgment batch on its first view after each start (issue 12). NULL for raters from before,
-- who are named as before.
ALTER TABLE raters ADD COLUMN judge TEXT;
