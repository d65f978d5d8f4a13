-- A writer's second tab (issue 53 follow-up): each writing page names itself with a random id when it loads, and the
-- stored draft keeps the id of the page that saved it last. A page's save is taken when that page saved the stored
-- draft itself, or when the stored version is the one it started from; otherwise another tab or window changed the
-- draft since, and the page is told so (409) instead of its save being dropped in silence.
ALTER TABLE write_drafts ADD COLUMN tab TEXT CHECK (tab IS NULL OR length(tab) BETWEEN 8 AND 64);
