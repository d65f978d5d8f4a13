-- Issue 51 (item 8): the comparisons of a batch are served interleaved, not one after another. A new rater's promise
-- takes the least filled regular pairs first; among pairs equally filled it took the lowest id, and the pairs of a
-- batch are numbered comparison by comparison, so four raters who consented together were all promised pairs of the
-- first comparison and the second got none. `serve_order` is the pair's place in the order that breaks those ties:
-- the comparisons in turn (place r of comparison j of C comes at r * C + j), each comparison's pairs starting at a
-- different sample (comparison j at sample j * n / C of its n), so that consecutive places are of different scenario
-- samples and a rater allowed one pair per sample is not turned from one comparison's pair to the next comparison's
-- pair of the same sample. Set when pairs are formed (src/batches/serve-order.ts); pairs added later come after.
ALTER TABLE pairs ADD COLUMN serve_order INTEGER;

UPDATE pairs SET serve_order = placed.serve_order
FROM (
  SELECT id, ((((s - (j * n) / c) % n) + n) % n) * c + j AS serve_order
  FROM (
    SELECT p.id,
      row_number() OVER (PARTITION BY p.batch_id, p.comparison_id ORDER BY p.id) - 1 AS s,
      count(*) OVER (PARTITION BY p.batch_id, p.comparison_id) AS n,
      coalesce((SELECT count(*) FROM comparisons o JOIN comparisons m ON m.id = p.comparison_id WHERE o.batch_id = p.batch_id AND o.position < m.position), 0) AS j,
      max(1, (SELECT count(*) FROM comparisons o WHERE o.batch_id = p.batch_id)) AS c
    FROM pairs p WHERE p.kind = 'regular'
  )
) AS placed
WHERE pairs.id = placed.id;

-- The order a promise reads open pairs in (migration 022), now with serve_order breaking ties of load.
DROP INDEX pairs_open_by_load;
CREATE INDEX pairs_open_by_load ON pairs (batch_id, accepted + leased + reserved, serve_order, id) WHERE kind = 'regular' AND removed_at IS NULL;
