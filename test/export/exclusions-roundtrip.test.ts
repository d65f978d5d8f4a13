// Exclusions as the rating code records them, and the judgments export read back by the analysis module: the two
// features must agree on how a screened-out rater and the export's true/false flags are written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJudgmentsFile } from '../../src/analysis/judgments-file.js';
import type { Db } from '../../src/db/connection.js';
import { exportToPath } from '../../src/export/export-batch.js';
import { assignNextPair } from '../../src/rating/assign-next-pair.js';
import { setRaterExcluded } from '../../src/rating/rater-admin.js';
import { recordJudgment } from '../../src/rating/record-judgment.js';
import { makeBatchWithJudgments, makeDialogue, makePair, makeRater, makeScenario } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { readJsonl } from './export-fixtures.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');

/**
 * A batch of two regular pairs judged by two raters, one onboarding pair, a third rater screened out by the
 * rating code for answering it wrongly, and the second rater excluded by a researcher through the admin function.
 */
function batchWithScreening(db: Db) {
  const made = makeBatchWithJudgments(db, {
    votes: [
      ['a', 'b'],
      ['a', 'a'],
    ],
    settings: { onboarding: { pairs: 1, threshold: 1 } },
  });
  const scenario = makeScenario(db);
  const coherent = makeDialogue(db, { runId: made.runId, scenario, mode: 'AGENTS', model: 'test-model' });
  const variant = makeDialogue(db, { runId: made.runId, scenario, mode: 'AGENTS', model: 'test-model', sampleIndex: 7 });
  const onboardingPair = makePair(db, { batchId: made.batchId, comparisonId: null, dialogueA: coherent, dialogueB: variant, kind: 'onboarding', expected: 'a' });

  const newcomer = makeRater(db, { batchId: made.batchId, status: 'onboarding' });
  const assigned = assignNextPair(db, newcomer, { now: NOW, random: () => 0.5 });
  if (assigned.kind !== 'assigned') throw new Error(`expected an assignment, got ${assigned.kind}`);
  expect(assigned.assignment.pair_id).toBe(onboardingPair);
  // Expected answer: dialogue a. Pick the screen side showing dialogue b, so the answer is wrong.
  const wrong = assigned.assignment.left_side === 'a' ? 'right' : 'left';
  const outcome = recordJudgment(db, newcomer, { assignmentPublicId: assigned.assignment.public_id, choice: wrong, reason: null, activeMs: 4000 }, NOW);
  expect(outcome).toMatchObject({ kind: 'stored', screenedOut: true });

  const excludedRater = made.raterIds[1] as number;
  setRaterExcluded(db, { batchId: made.batchId, raterId: excludedRater, excluded: true, reason: 'too fast, "straight-lined"' }, 'researcher@example.org', NOW);
  return { ...made, newcomer, excludedRater };
}

describe('exclusions written by the rating code, exported and read back', () => {
  it('judgments-jsonl with --include-excluded --include-gold, for a rater screened out by onboarding, says "screened out (onboarding)" and keeps the researcher\'s own reason for the excluded rater', async () => {
    const { db } = createTestDb();
    const made = batchWithScreening(db);
    const stored = db.prepare<{ id: number }, { status: string; excluded: number; exclusion_reason: string }>('SELECT status, excluded, exclusion_reason FROM raters WHERE id = :id').get({ id: made.newcomer });
    expect(stored).toEqual({ status: 'screened_out', excluded: 1, exclusion_reason: 'onboarding' });

    const out = join(tempDir(), 'all.jsonl');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-jsonl', includeExcluded: true, includeGold: true }, out);
    const rows = readJsonl(out);
    expect(rows).toHaveLength(5);
    const gold = rows.filter((r) => r.is_gold === true);
    expect(gold).toHaveLength(1);
    expect(gold[0]).toMatchObject({ excluded: true, exclusion_reason: 'screened out (onboarding)', correct: false });
    const reasons = rows.filter((r) => r.is_gold === false).map((r) => r.exclusion_reason);
    expect(reasons.sort()).toEqual([null, null, 'too fast, "straight-lined"', 'too fast, "straight-lined"']);
  });

  it('hf, for a batch with a screened-out and a researcher-excluded rater, counts each under its own heading in the dataset card', async () => {
    const { db } = createTestDb();
    const made = batchWithScreening(db);
    const dir = join(tempDir(), 'hf');
    await exportToPath(db, { batch: String(made.batchId), format: 'hf' }, dir);
    const card = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(card).toContain('3 rater session(s); 2 gave at least one judgment, 1 of them included. 1 excluded by the researcher, 1 screened out by the onboarding or attention checks.');
  });

  it('readJudgmentsFile, on a judgments-csv export with --include-excluded --include-gold, drops the excluded and gold rows and keeps the included judgments', async () => {
    const { db } = createTestDb();
    const made = batchWithScreening(db);
    const out = join(tempDir(), 'all.csv');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv', includeExcluded: true, includeGold: true }, out);
    // The export's flags are true/false, as written; the reader must understand them.
    expect(readFileSync(out, 'utf8')).toMatch(/,true,false,/);

    const file = await readJudgmentsFile(out);
    expect(file.format).toBe('simarena export');
    expect(file.table.n).toBe(2);
    expect(file.exclusions.dropped).toEqual(
      expect.arrayContaining([
        { reason: 'excluded: too fast, "straight-lined"', judgments: 2 },
        { reason: 'excluded: screened out (onboarding)', judgments: 1 },
      ]),
    );
    const onboardingTally = [...file.attention.values()];
    expect(onboardingTally).toEqual([{ correct: 0, answered: 1 }]);
  });

  it('readJudgmentsFile, on a judgments-csv export with --include-gold only, drops the gold rows whose two sides share a condition instead of failing', async () => {
    const { db } = createTestDb();
    const made = batchWithScreening(db);
    db.prepare('UPDATE raters SET excluded = 0, exclusion_reason = NULL, status = :status WHERE id = :id').run({ id: made.newcomer, status: 'rating' });
    const out = join(tempDir(), 'gold.csv');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv', includeGold: true }, out);
    const file = await readJudgmentsFile(out);
    expect(file.table.n).toBe(2);
    expect(file.exclusions.dropped).toEqual([{ reason: 'gold (attention or onboarding) pairs', judgments: 1 }]);
  });
});
