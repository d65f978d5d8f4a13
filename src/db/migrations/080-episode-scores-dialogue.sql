-- A dialogue's latest episode evaluation (`max(evaluation_id) FROM episode_scores WHERE dialogue_id = ?`) is asked
-- once per score by the paper table (src/analysis/paper-table.queries.ts: the CLI's run table and the analysis
-- worker's batch section) and once per answer by the role-play outcomes of the console's analysis page, on the request
-- thread. The primary key leads on evaluation_id, so each ask walked every evaluation's scores: quadratic, 2.6 s for
-- a run of 1,000 dialogues scored once, 47 s for 3,000 scored twice. With this index each ask is one seek
-- (scripts/bench/episode-scores.ts).
CREATE INDEX episode_scores_dialogue ON episode_scores (dialogue_id, evaluation_id);
