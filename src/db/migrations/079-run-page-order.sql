-- The run page lists a run's dialogues 50 at a time, failed ones first, then by scenario, sample and mode
-- (src/console/run-list.queries.ts, listRunDialogues). No index gave that order: every dialogue of the run was read,
-- its turns counted, and all of them sorted before the page was cut, on the request thread. At 100,000 dialogues
-- the first page took 66 ms and a middle one 430 ms (scripts/bench/run-counts.ts). Read in this index's order, the
-- page's rows are the first ones read.
CREATE INDEX dialogues_run_page ON dialogues (run_id, (state = 'failed') DESC, scenario_id, sample_index, mode);
