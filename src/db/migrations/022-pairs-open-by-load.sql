-- A batch's regular pairs in the order a new rater's promise takes them: least filled first (accepted judgments, live
-- leases and reservations: the counters of migrations 012 and 019), then by id. Choosing a promise at consent then
-- reads open pairs from the least filled up until the per-rater cap is reached, instead of sorting every open pair of
-- the batch (issue 12: with 5,000 open pairs that sort was 14% of the server's CPU under rater load).
CREATE INDEX pairs_open_by_load ON pairs (batch_id, accepted + leased + reserved, id) WHERE kind = 'regular' AND removed_at IS NULL;
