// The study of the rater-load benchmark, built with the platform's own functions (library, import run, batch), and
// the bulk seeding of already-stored judgments in one transaction of INSERT … SELECT over a recursive sequence.
import { readFileSync } from 'node:fs';
import { type Db, openDatabase } from '../../../src/db/connection.js';
import { migrate } from '../../../src/db/migrate.js';
import { createApiToken } from '../../../src/auth/api-tokens.js';
import { hashPassword } from '../../../src/auth/password.js';
import { insertUser } from '../../../src/auth/user.queries.js';
import { transitionBatch } from '../../../src/batches/batch.commands.js';
import type { BatchSettingsInput } from '../../../src/batches/batch.schema.js';
import { createBatch } from '../../../src/batches/create-batch.js';
import { insertDialogue, replaceTurns } from '../../../src/generation/dialogue.queries.js';
import { countTurnWords } from '../../../src/generation/dialogue-words.js';
import { judgePseudonym } from '../../../src/rating/judge-pseudonym.js';
import { insertSimpleRun } from '../../../src/generation/run.queries.js';
import { builtInLibraryDir, installLibrary, readLibrary } from '../../../src/scenarios/load-library.js';
import { demoDialoguesFile } from '../../../src/demo/seed-demo.js';

export const BENCH_MODEL = 'bench-model';
export const CONDITION_A = `SCRIPT:${BENCH_MODEL}`;
export const CONDITION_B = `AGENTS:${BENCH_MODEL}`;
export const JUDGMENTS_PER_PAIR = 50;
export const PER_RATER_CAP = 20;
export const ADMIN = { email: 'bench@example.org', password: 'bench-password-1' };

type DemoTurn = { speaker: 1 | 2; action: string; text: string };
// Real turn texts (the hand-written demo dialogues), so that pages weigh what real pages weigh.
const demoTurns = (JSON.parse(readFileSync(demoDialoguesFile, 'utf8')) as { mode: string; turns: DemoTurn[] }[]).flatMap((d) =>
  d.turns.filter((t) => t.action === 'speak').map((t) => ({ text: t.text, agents: d.mode !== 'SCRIPT' })),
);

/** Twelve speaking turns for sample i in a mode, alternating speakers. */
export function benchDialogueTurns(i: number, mode: 'SCRIPT' | 'AGENTS'): { speaker: 1 | 2; action: 'speak'; text: string }[] {
  const pool = demoTurns.filter((t) => t.agents === (mode === 'AGENTS'));
  return Array.from({ length: 12 }, (_, t) => ({
    speaker: (t % 2 === 0 ? 1 : 2) as 1 | 2,
    action: 'speak' as const,
    text: pool[(i * 5 + t) % pool.length]?.text ?? 'Hello.',
  }));
}

export type BenchStudy = { batchId: number; publicId: string; apiToken: string; pairs: number };

/** The bench batch's settings (a Prolific batch of SCRIPT vs AGENTS over the bench import), with `overrides` replacing any. */
export function benchBatchSettings(overrides: Partial<BatchSettingsInput> = {}): BatchSettingsInput {
  return {
    name: 'Rater-load benchmark',
    runs: ['bench-import'],
    comparisons: [[CONDITION_A, CONDITION_B]],
    judgmentsPerPair: JUDGMENTS_PER_PAIR,
    allowTie: true,
    reason: 'optional',
    perRaterCap: PER_RATER_CAP,
    // What the launch checklist (src/batches/batch-launch.ts) requires before a Prolific batch opens.
    provider: { kind: 'prolific', completionCodes: { completed: 'BENCHDONE', screenedOut: 'BENCHOUT', noConsent: 'BENCHNOCONSENT' } },
    // Prolific's recommended £9.00 an hour for the 30 minutes a session of PER_RATER_CAP pairs takes at least: below its
    // minimum (£6.00) the checklist refuses to open the batch, and every benchmark built on it stopped at its start.
    pay: '£4.50',
    // Every virtual rater comes from 127.0.0.1: the per-address limits (issue 10) would turn most of them away.
    addressLimits: { ratersPerWindow: 10_000, windowMinutes: 60, activeRaters: 10_000 },
    consent: 'A benchmark study.',
    instructions: 'Choose the more natural conversation.',
    ...overrides,
  };
}

/**
 * A migrated database with the built-in library, an import run of 2 × pairs dialogues and an open batch over them;
 * `settings` replaces the batch settings named (K, the cap, a stopping rule, ...).
 */
export async function buildStudy(db: Db, pairs: number, settings: Partial<BatchSettingsInput> = {}): Promise<BenchStudy> {
  const now = new Date();
  installLibrary(db, readLibrary(builtInLibraryDir), 'simarena', now.toISOString());
  const userId = insertUser(db, { email: ADMIN.email, passwordHash: await hashPassword(ADMIN.password), role: 'admin' }, now);
  const casts = db.prepare<[], { id: number; scenario_id: string }>('SELECT id, scenario_id FROM casts ORDER BY id').all();
  db.transaction(() => {
    const runId = insertSimpleRun(db, { name: 'bench-import', kind: 'import', state: 'complete', model: BENCH_MODEL, modes: ['SCRIPT', 'AGENTS'], createdBy: 'bench' }, now);
    for (let i = 0; i < pairs; i++) {
      const cast = casts[i % casts.length];
      if (!cast) throw new Error('the built-in library has no casts');
      for (const mode of ['SCRIPT', 'AGENTS'] as const) {
        const id = insertDialogue(
          db,
          { runId, scenarioId: cast.scenario_id, castId: cast.id, sampleIndex: Math.floor(i / casts.length), mode, model: BENCH_MODEL, origin: 'imported', state: 'complete' },
          now,
        );
        replaceTurns(db, id, benchDialogueTurns(i, mode));
      }
    }
  })();
  const created = createBatch(db, benchBatchSettings(settings), { actor: 'bench', now });
  transitionBatch(db, created.batchId, 'open', 'bench', now);
  const token = createApiToken(db, { id: userId, email: ADMIN.email }, 'bench', 'bench', now);
  return { batchId: created.batchId, publicId: created.publicId, apiToken: token.secret, pairs: created.pairs.length };
}

/**
 * Stores `count` judgments in the batch, as a study that has been running a while would hold them: on pairs of their
 * own (two-turn dialogues in a run of their own, in the batch's comparison), each pair judged by JUDGMENTS_PER_PAIR
 * distinct raters who completed PER_RATER_CAP comparisons each, every judgment with its answered assignment, and the
 * pairs' counters (accepted, accepted_left_a) equal to what they count. One transaction; SQL sequences, no JS loop.
 */
/** The two turns of every dialogue seeded behind stored judgments (their words are stored with them, as replaceTurns does). */
const STORED_TURNS = ['Could you help me with this?', 'Of course, tell me more.'] as const;

export function seedStoredJudgments(db: Db, batchId: number, count: number): void {
  if (count <= 0) return;
  const k = JUDGMENTS_PER_PAIR;
  const cap = PER_RATER_CAP;
  // Enough pairs that a rater's PER_RATER_CAP judgments fall on distinct pairs.
  const pairs = Math.max(Math.ceil(count / k), cap);
  const raters = Math.ceil(count / cap);
  const at = new Date(Date.now() - 86_400_000).toISOString();
  const max = (table: string) => (db.prepare(`SELECT coalesce(max(id), 0) FROM ${table}`).pluck().get() as number) + 1;
  db.pragma('cache_size = -200000');
  // The progress counters' per-row triggers (migration 006) would make a million inserts slow: within the transaction
  // they are set aside and the counters recomputed in bulk below, to the very values the triggers would have reached.
  const counterTriggers = db
    .prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'judgments' AND (name LIKE 'comparison_tallies_%' OR name LIKE 'batch_judgment_counts_%')")
    .all();
  db.transaction(() => {
    for (const t of counterTriggers) db.exec(`DROP TRIGGER ${t.name}`);
    const batch = db.prepare<{ b: number }, { question_version: number; comparison_id: number }>(
      'SELECT b.question_version, c.id AS comparison_id FROM batches b JOIN comparisons c ON c.batch_id = b.id WHERE b.id = :b ORDER BY c.position LIMIT 1',
    ).get({ b: batchId });
    if (!batch) throw new Error(`no batch ${batchId} with a comparison`);
    const runId = insertSimpleRun(db, { name: `bench-stored-${count}`, kind: 'import', state: 'complete', model: BENCH_MODEL, modes: ['SCRIPT', 'AGENTS'], createdBy: 'bench' }, new Date(at));
    db.prepare('INSERT INTO batch_runs (batch_id, run_id) VALUES (:b, :r)').run({ b: batchId, r: runId });
    db.exec('CREATE TEMP TABLE bench_casts AS SELECT row_number() OVER (ORDER BY id) - 1 AS n, id, scenario_id FROM casts');
    const castCount = db.prepare('SELECT count(*) FROM temp.bench_casts').pluck().get() as number;
    const d0 = max('dialogues');
    const p0 = max('pairs');
    const r0 = max('raters');
    const a0 = max('assignments');
    const j0 = max('judgments');
    const seq = (n: number) => `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ${n - 1})`;
    // Integers go into the SQL text: a bound JS number is a REAL, and i / :cap would not divide as integers.
    const v = { b: batchId, run: runId, at, model: BENCH_MODEL, a: CONDITION_A, bb: CONDITION_B, qv: batch.question_version, cmp: batch.comparison_id };
    db.prepare(
      `${seq(2 * pairs)} INSERT INTO dialogues (id, run_id, scenario_id, cast_id, sample_index, mode, model, origin, state, meta, created_at, completed_at, words)
       SELECT ${d0} + i, :run, c.scenario_id, c.id, 1000000 + i / 2, CASE i % 2 WHEN 0 THEN 'SCRIPT' ELSE 'AGENTS' END, :model, 'imported', 'complete', '{}', :at, :at, ${countTurnWords(STORED_TURNS.map((text) => ({ text })))}
       FROM seq JOIN temp.bench_casts c ON c.n = (i / 2) % ${castCount}`,
    ).run(v);
    db.prepare(
      `${seq(4 * pairs)} INSERT INTO turns (dialogue_id, idx, speaker, action, text)
       SELECT ${d0} + i / 2, i % 2, 1 + i % 2, 'speak', CASE i % 2 WHEN 0 THEN :turn0 ELSE :turn1 END FROM seq`,
    ).run({ ...v, turn0: STORED_TURNS[0], turn1: STORED_TURNS[1] });
    db.prepare(
      `${seq(pairs)} INSERT INTO pairs (id, batch_id, comparison_id, kind, dialogue_a_id, dialogue_b_id, scenario_id, cast_id, sample_index)
       SELECT ${p0} + i, :b, :cmp, 'regular', ${d0} + 2 * i, ${d0} + 2 * i + 1, c.scenario_id, c.id, 1000000 + i
       FROM seq JOIN temp.bench_casts c ON c.n = i % ${castCount}`,
    ).run(v);
    db.prepare(
      `${seq(raters)} INSERT INTO raters (id, batch_id, public_id, provider, participant_id, study_id, session_id, status, created_at, last_seen_at, finished_at)
       SELECT ${r0} + i, :b, 'bench-rater-' || ${r0} || '-' || i, 'prolific', printf('%024x', ${r0} + i), 'benchstudy', printf('bench%d', ${r0} + i), 'completed', :at, :at, :at FROM seq`,
    ).run(v);
    // Their pseudonyms, as consent stores them (migration 023).
    const salt = db.prepare<{ b: number }, string>('SELECT judge_salt FROM batches WHERE id = :b').pluck().get({ b: batchId }) ?? '';
    const setJudge = db.prepare('UPDATE raters SET judge = :judge WHERE id = :id');
    for (const r of db.prepare<{ r0: number }, { id: number; participant_id: string; public_id: string }>('SELECT id, participant_id, public_id FROM raters WHERE id >= :r0').all({ r0 })) {
      setJudge.run({ id: r.id, judge: judgePseudonym(salt, { provider: 'prolific', participantId: r.participant_id, raterPublicId: r.public_id }) });
    }
    // Judgment i: pair i % pairs, rater i / cap (distinct pairs per rater since cap <= pairs; distinct raters per pair).
    db.prepare(
      `${seq(count)} INSERT INTO assignments (id, public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at)
       SELECT ${a0} + i, 'bench-asg-' || ${a0} || '-' || i, :b, ${p0} + i % ${pairs}, ${r0} + i / ${cap}, CASE (i / ${pairs}) % 2 WHEN 0 THEN 'a' ELSE 'b' END, 'answered', :at, :at FROM seq`,
    ).run(v);
    db.prepare(
      `${seq(count)} INSERT INTO judgments (id, assignment_id, batch_id, pair_id, rater_id, left_side, choice, winner, label, is_gold, shown_at, submitted_at, active_ms, question_version)
       SELECT ${j0} + i, ${a0} + i, :b, ${p0} + i % ${pairs}, ${r0} + i / ${cap}, side, choice,
         CASE choice WHEN 'tie' THEN 'tie' WHEN 'left' THEN side ELSE CASE side WHEN 'a' THEN 'b' ELSE 'a' END END,
         CASE choice WHEN 'tie' THEN 'TIE' WHEN 'left' THEN CASE side WHEN 'a' THEN :a ELSE :bb END ELSE CASE side WHEN 'a' THEN :bb ELSE :a END END,
         0, :at, :at, 8000 + (i * 7919) % 50000, :qv
       FROM (SELECT i, CASE (i / ${pairs}) % 2 WHEN 0 THEN 'a' ELSE 'b' END AS side,
               CASE (i * 2654435761) % 10 WHEN 0 THEN 'tie' WHEN 1 THEN 'right' WHEN 2 THEN 'right' WHEN 3 THEN 'right' WHEN 4 THEN 'right' ELSE 'left' END AS choice
             FROM seq)`,
    ).run(v);
    db.prepare(
      `UPDATE pairs SET accepted = c.n, accepted_left_a = c.left_a
       FROM (SELECT pair_id, count(*) AS n, sum(left_side = 'a') AS left_a FROM judgments WHERE batch_id = :b AND pair_id >= ${p0} GROUP BY pair_id) AS c
       WHERE pairs.id = c.pair_id`,
    ).run({ b: batchId });
    db.exec('DROP TABLE temp.bench_casts');
    if (counterTriggers.length > 0) {
      db.prepare(
        `UPDATE comparison_tallies SET wins_a = t.a, wins_b = t.b, ties = t.tie
         FROM (SELECT c.id AS comparison_id, coalesce(sum(j.winner = 'a'), 0) AS a, coalesce(sum(j.winner = 'b'), 0) AS b, coalesce(sum(j.winner = 'tie'), 0) AS tie
               FROM comparisons c
               LEFT JOIN pairs p ON p.comparison_id = c.id AND p.kind = 'regular' AND p.removed_at IS NULL
               LEFT JOIN judgments j ON j.pair_id = p.id AND j.is_gold = 0 AND j.rater_id NOT IN (SELECT r.id FROM raters r WHERE r.batch_id = :b AND r.excluded = 1)
               WHERE c.batch_id = :b GROUP BY c.id) AS t
         WHERE comparison_tallies.comparison_id = t.comparison_id`,
      ).run({ b: batchId });
      db.prepare(
        `UPDATE batch_judgment_counts SET judgments = t.n, regular = t.regular, timed = t.timed
         FROM (SELECT count(*) AS n, coalesce(sum(is_gold = 0), 0) AS regular, coalesce(sum(is_gold = 0 AND active_ms IS NOT NULL), 0) AS timed
               FROM judgments WHERE batch_id = :b) AS t
         WHERE batch_id = :b`,
      ).run({ b: batchId });
      for (const t of counterTriggers) db.exec(t.sql);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/**
 * A fresh database at `path` for the benchmarks that read a stored analysis: migrated, a study of `pairs` pairs and
 * `judgments` stored judgments, the seeding time printed under `label`. The handle stays open for the caller.
 */
export async function seedBenchDatabase(path: string, pairs: number, judgments: number, label: string): Promise<{ db: Db; study: BenchStudy }> {
  const db = openDatabase(path);
  migrate(db);
  const study = await buildStudy(db, pairs);
  const started = performance.now();
  seedStoredJudgments(db, study.batchId, judgments);
  console.log(`${label}: ${judgments.toLocaleString('en')} judgments seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { db, study };
}
