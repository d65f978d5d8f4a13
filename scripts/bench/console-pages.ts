// Console and API reads that scanned a large table on the request thread (issue 12), with a million stored judgments
// (50,000 raters, 40,000 dialogues): each as the pages read it now (migration 025), against the SQL they ran before,
// measured in the same process on the same file.
//   npx tsx scripts/bench/console-pages.ts [--judgments 1000000]
import { join } from 'node:path';
import { countBatchJudgmentsForApi, listBatchJudgmentsForApi, pageAfter } from '../../src/api/api-judgments.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { listRunChoices } from '../../src/console/batch-form.queries.js';
import { batchMedianSeconds } from '../../src/analysis/batch-median-time.queries.js';
import { attentionCounts, batchProgress, batchRaterCounts } from '../../src/console/batch-progress.queries.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { judgmentsAfterStop } from '../../src/rating/sequential.queries.js';
import { buildStudy, seedStoredJudgments } from './support/bench-study.js';
import { medianMs } from './support/median-time.js';
import { benchDir } from './support/bench-dir.js';

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? (argv[i + 1] as string) : fallback;
};
const JUDGMENTS = Number(option('judgments', '1000000'));
const PER_PAGE = 500;

const dir = benchDir('simarena-console-pages-');
const path = join(dir, 'pages.db');
let db = openDatabase(path);
migrate(db);
const started = performance.now();
const study = await buildStudy(db, 300);
seedStoredJudgments(db, study.batchId, JUDGMENTS);
db.close();
console.log(`${JUDGMENTS} judgments stored (${((performance.now() - started) / 1000).toFixed(1)} s)`);

db = openDatabase(path);
const batchId = study.batchId;
const batch = getBatchRow(db, batchId);
if (!batch) throw new Error('no batch');
const time = (what: () => unknown) => medianMs(what, 5, { warm: true });

// What the pages ran before migration 025 (the same statements, kept here as the baseline).
const EXCLUSION = `CASE WHEN r.status = 'screened_out' AND r.excluded = 1 AND r.exclusion_reason IN ('onboarding', 'attention') THEN 'screened out (' || r.exclusion_reason || ')'
  WHEN r.excluded = 1 THEN COALESCE(NULLIF(r.exclusion_reason, ''), 'excluded') WHEN r.status = 'screened_out' THEN 'screened out' WHEN p.removed_at IS NOT NULL THEN 'pair removed' END`;
const SCOPE = `j.batch_id = :batchId AND (:questionId IS NULL OR j.question_id = :questionId) AND (:includeGold = 1 OR j.is_gold = 0) AND (:includeExcluded = 1 OR (${EXCLUSION}) IS NULL)`;
const scope = { batchId, questionId: null, includeGold: 1, includeExcluded: 1 };
const oldPage = db.prepare(
  `SELECT j.id AS judgment_id, j.batch_id, j.pair_id, j.question_id, j.question_index, p.kind AS pair_kind, p.scenario_id, s.category AS scenario_category,
     COALESCE(c.condition_a, da.mode || ':' || da.model) AS model_a, COALESCE(c.condition_b, db.mode || ':' || db.model) AS model_b,
     p.dialogue_a_id, p.dialogue_b_id, j.left_side, j.winner, j.reason, r.id AS rater_id, r.public_id AS rater_public_id, r.provider, r.participant_id, r.study_id, r.session_id,
     j.is_gold, j.correct, j.shown_at, j.submitted_at, j.active_ms, j.question_version, ${EXCLUSION} AS exclusion_reason
   FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN raters r ON r.id = j.rater_id JOIN scenarios s ON s.id = p.scenario_id
   JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id LEFT JOIN comparisons c ON c.id = p.comparison_id
   WHERE ${SCOPE} ORDER BY j.pair_id, j.id LIMIT :limit OFFSET :offset`,
);
const oldCount = db.prepare(`SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN raters r ON r.id = j.rater_id WHERE ${SCOPE}`).pluck();
const oldRaters = db.prepare(
  `SELECT count(*) AS total, coalesce(sum(last_seen_at >= :since AND status IN ('consent', 'instructions', 'onboarding', 'rating')), 0) AS active,
     coalesce(sum(status = 'completed'), 0) AS completed, coalesce(sum(excluded), 0) AS excluded
   FROM raters WHERE batch_id = :batchId AND provider <> 'preview'`,
);
// The same listing with SQLite told not to use the index migration 025 added (it had none to use before).
const oldRunChoices = db.prepare(
  `SELECT r.id, r.name, r.kind, r.state,
     (SELECT group_concat(condition, '|') FROM (SELECT DISTINCT d.mode || ':' || d.model AS condition FROM dialogues d NOT INDEXED
        WHERE d.run_id = r.id AND d.state = 'complete' AND d.origin <> 'derived' ORDER BY condition)) AS conditions,
     (SELECT count(*) FROM dialogues d NOT INDEXED WHERE d.run_id = r.id AND d.state = 'complete') AS complete
   FROM runs r ORDER BY r.id DESC`,
);

const oldMiddle = db
  .prepare(
    `SELECT j.active_ms FROM judgments j WHERE j.batch_id = :batchId AND j.question_index = 0 AND j.is_gold = 0 AND j.active_ms IS NOT NULL
     ORDER BY j.active_ms LIMIT 2 OFFSET :offset`,
  )
  .pluck();
const timed = db.prepare('SELECT timed FROM batch_judgment_counts WHERE batch_id = ?').pluck().get(batchId) as number;
const oldMedianSeconds = () => {
  const [lower = 0, upper = lower] = oldMiddle.all({ batchId, offset: Math.floor((timed - 1) / 2) }) as number[];
  return Math.round((timed % 2 === 1 ? lower : (lower + upper) / 2) / 100) / 10;
};

const total = countBatchJudgmentsForApi(db, batchId);
const lastPage = Math.max(0, Math.ceil(total / PER_PAGE) - 1);
const now = new Date();
const since = new Date(now.getTime() - 5 * 60_000).toISOString();
// Same figures as before, or the comparison means nothing.
if (oldCount.get(scope) !== total) throw new Error('the judgment counts differ');
const samePage = (offset: number) =>
  JSON.stringify((oldPage.all({ ...scope, limit: PER_PAGE, offset }) as { judgment_id: number }[]).map((r) => r.judgment_id)) ===
  JSON.stringify(listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset }).records.map((r) => r.judgment_id));
if (!samePage(0) || !samePage(lastPage * PER_PAGE)) throw new Error('the judgment pages differ');
// The last page again, reached by the cursor of the page before it (?after=) instead of its offset.
const lastByCursor = pageAfter(listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset: Math.max(0, lastPage - 1) * PER_PAGE }).nextAfter ?? '0.0');
if (lastPage > 0 && JSON.stringify(listBatchJudgmentsForApi(db, batch, PER_PAGE, lastByCursor).records) !== JSON.stringify(listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset: lastPage * PER_PAGE }).records)) {
  throw new Error('the last page by its cursor differs from it by its offset');
}
const progress = batchProgress(db, batchId, now);
const raters = oldRaters.get({ batchId, since }) as { total: number; completed: number; excluded: number; active: number };
if (progress?.raters !== raters.total || progress.raters_completed !== raters.completed || progress.raters_excluded !== raters.excluded || progress.raters_active !== raters.active) {
  throw new Error('the rater counts differ');
}
if (oldMedianSeconds() !== batchMedianSeconds(db, batchId)) throw new Error('the medians differ');

const rows: [string, number, number][] = [
  // "now" includes turning the rows into the API's records (JSON-ready objects); "before" is the SQL alone.
  [`API judgments, page 1 of ${lastPage + 1} (${PER_PAGE} a page)`, time(() => oldPage.all({ ...scope, limit: PER_PAGE, offset: 0 })), time(() => listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset: 0 }))],
  [`API judgments, page ${lastPage + 1} (the last)`, time(() => oldPage.all({ ...scope, limit: PER_PAGE, offset: lastPage * PER_PAGE })), time(() => listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset: lastPage * PER_PAGE }))],
  [`API judgments, page ${lastPage + 1}, offset then ?after=`, time(() => listBatchJudgmentsForApi(db, batch, PER_PAGE, { offset: lastPage * PER_PAGE })), time(() => listBatchJudgmentsForApi(db, batch, PER_PAGE, lastByCursor))],
  ['API judgments, the total on every page', time(() => oldCount.get(scope)), time(() => countBatchJudgmentsForApi(db, batchId))],
  ['batch raters: total, active, completed, excluded', time(() => oldRaters.get({ batchId, since })), time(() => batchRaterCounts(db, batchId, now))],
  ['median time per judgment (batch pages, poll)', time(oldMedianSeconds), time(() => batchMedianSeconds(db, batchId))],
  ['run choices (new-batch form, dialogue browser)', time(() => oldRunChoices.all()), time(() => listRunChoices(db))],
];
const progressMs = time(() => batchProgress(db, batchId, now));
console.log(`median of 5 each; before = the SQL the pages ran before migration 025, now = as they read it now`);
for (const [what, before, after] of rows) {
  console.log(`${what.padEnd(52)} before ${before.toFixed(1).padStart(7)} ms, now ${after.toFixed(2).padStart(7)} ms = ${(after / before).toFixed(3)} of before`);
}
console.log(`the whole of progress.json now (batchProgress, the batch page's poll): ${progressMs.toFixed(1)} ms`);

// Attention checks at a tenth of the judgments (the seeded batch has none): every tenth pair made an attention pair,
// its judgments gold and one in seven answered wrong, the counters of migration 082 set as its own backfill sets them.
// Before it, progress.json counted them from the judgments on each poll.
const oldAttention = db.prepare<{ batchId: number }, { n: number; passed: number | null }>(
  `SELECT count(*) AS n, sum(j.correct) AS passed FROM pairs p CROSS JOIN judgments j
   WHERE p.batch_id = :batchId AND p.kind = 'attention' AND j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0`,
);
db.transaction(() => {
  const triggers = db.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('pairs', 'judgments')").all();
  for (const t of triggers) db.exec(`DROP TRIGGER ${t.name}`);
  db.prepare("UPDATE pairs SET kind = 'attention', comparison_id = NULL, expected = 'a' WHERE batch_id = :batchId AND kind = 'regular' AND id % 10 = 0").run({ batchId });
  db.prepare("UPDATE judgments SET is_gold = 1, correct = (id % 7 <> 0) WHERE batch_id = :batchId AND pair_id IN (SELECT id FROM pairs WHERE batch_id = :batchId AND kind = 'attention')").run({ batchId });
  db.prepare(
    `UPDATE batch_judgment_counts SET (attention_checks, attention_passed) = (SELECT n, coalesce(passed, 0) FROM (${oldAttention.source.replaceAll(':batchId', 'batch_judgment_counts.batch_id')}))
     WHERE batch_id = :batchId`,
  ).run({ batchId });
  for (const t of triggers) db.exec(t.sql);
})();
const attention = oldAttention.get({ batchId }) ?? { n: 0, passed: null };
const withChecks = batchProgress(db, batchId, now);
if (withChecks?.attention_checks !== attention.n || withChecks.attention_pass_rate !== (attention.passed ?? 0) / attention.n) throw new Error('the attention counts differ');
const attentionBefore = time(() => oldAttention.get({ batchId }));
const attentionNow = time(() => attentionCounts(db, batchId));
console.log(
  `attention checks, ${attention.n.toLocaleString('en')} answered (progress.json's pass rate): before ${attentionBefore.toFixed(1)} ms, now ${attentionNow.toFixed(2)} ms; ` +
    `the whole of progress.json with them: ${time(() => batchProgress(db, batchId, now)).toFixed(1)} ms`,
);

// A stopped sequential comparison's judgments after its stop (the batch page's standing, on each view): the batch's
// comparison stopped 500 judgments before its last. Before, each pair's every judgment was read and its id compared.
const comparisonId = db.prepare('SELECT id FROM comparisons WHERE batch_id = :batchId ORDER BY position LIMIT 1').pluck().get({ batchId }) as number;
const lastJudgment = db.prepare('SELECT max(id) FROM judgments').pluck().get() as number;
db.prepare("UPDATE comparisons SET stopped_at = :at, stop_reason = 'efficacy', stopped_after_judgment = :after WHERE id = :id").run({ at: now.toISOString(), after: lastJudgment - 500, id: comparisonId });
const oldAfterStop = db.prepare(
  `SELECT count(*) AS judgments, count(DISTINCT j.pair_id) AS pairs, count(*) FILTER (WHERE j.winner = 'a') AS a,
     count(*) FILTER (WHERE j.winner = 'b') AS b, count(*) FILTER (WHERE j.winner = 'tie') AS ties
   FROM comparisons c
   JOIN pairs p INDEXED BY pairs_by_comparison ON p.comparison_id = c.id AND p.kind = 'regular' AND p.removed_at IS NULL
   JOIN judgments j INDEXED BY judgments_by_batch ON j.batch_id = p.batch_id AND j.pair_id = p.id AND j.question_index = 0
     AND (CASE WHEN c.stopped_after_judgment IS NULL THEN j.submitted_at > c.stopped_at ELSE j.id > c.stopped_after_judgment END)
   JOIN raters r ON r.id = j.rater_id AND r.excluded = 0 AND r.status <> 'screened_out'
   WHERE c.id = :id AND c.stopped_at IS NOT NULL`,
);
const afterStop = judgmentsAfterStop(db, comparisonId);
if (JSON.stringify(oldAfterStop.get({ id: comparisonId })) !== JSON.stringify(afterStop)) throw new Error('the judgments after the stop differ');
console.log(
  `judgments after a comparison's stop (${afterStop.judgments} of them, the batch page's standing): before ${time(() => oldAfterStop.get({ id: comparisonId })).toFixed(1)} ms, ` +
    `now ${time(() => judgmentsAfterStop(db, comparisonId)).toFixed(1)} ms`,
);
db.close();
