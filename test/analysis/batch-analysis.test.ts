// A batch's analysis read from a real SQLite database: exclusions, dialogue metrics, the cache, and the CLI.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getBatchAnalysis, analysisComputedAt } from '../../src/analysis/analysis-cache.js';
import { batchDataVersion } from '../../src/analysis/batch-judgments.queries.js';
import { makeDialogue, makeJudgment, makePair, makeRater, makeBatchWithJudgments, makeScenario, makeTurns } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const NOW = new Date('2026-02-01T10:00:00.000Z');

describe('getBatchAnalysis', () => {
  it('for a batch with judgments, reports the comparison, per-category breakdown, dialogue metrics and caches the result', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, {
      votes: [
        ['b', 'b', 'a'],
        ['b', 'b', 'b'],
        ['a', 'b', 'b'],
        ['b', 'a', null],
      ],
      category: 'cooperative',
    });
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 100 })!;
    expect(report.source).toEqual({ kind: 'batch', batch_id: made.batchId, name: expect.any(String) });
    expect(report.comparisons[0]).toMatchObject({ a: 'SCRIPT:test-model', b: 'AGENTS:test-model', n: 11, wins_a: 3, wins_b: 8, ties: 0 });
    expect(report.comparisons[0]!.by_category).toEqual([expect.objectContaining({ key: 'cooperative', n: 11 })]);
    expect(report.comparisons[0]!.bootstrap.cluster).toBe('scenario');
    expect(report.comparisons[0]!.agreement.categories).toEqual(['SCRIPT:test-model', 'AGENTS:test-model']);
    expect(report.comparisons[0]!.length_control).toMatchObject({ mean_words_per_turn_a: 16, mean_words_per_turn_b: 30 });
    expect(report.dialogue_metrics.map((d) => [d.condition, d.words_per_turn, d.dialogues])).toEqual([
      ['AGENTS:test-model', 30, 4],
      ['SCRIPT:test-model', 16, 4],
    ]);
    expect(report.n_raters).toBe(3);
    const stored = db.prepare('SELECT data_version, computed_at FROM analysis_cache WHERE batch_id = ?').get(made.batchId) as { computed_at: string };
    expect(stored.computed_at).toBe(NOW.toISOString());
    // A second read with nothing changed is served from the cache (same computed_at, even with a later clock).
    const later = new Date('2026-02-02T10:00:00.000Z');
    expect(getBatchAnalysis(db, made.batchId, { now: later, bootstrap: 100 })!.generated_at).toBe(NOW.toISOString());
    expect(analysisComputedAt(db, made.batchId)).toBe(NOW.toISOString());
  });

  it('when a judgment is added or a rater is excluded, recomputes; the excluded rater\'s judgments are left out and listed', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['a', 'a'], ['b', 'b']] });
    expect(getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 50 })!.n_judgments).toBe(6);
    const extra = makeRater(db, { batchId: made.batchId });
    makeJudgment(db, { pairId: made.pairIds[0]!, raterId: extra, winner: 'b' });
    const t2 = new Date('2026-02-01T11:00:00.000Z');
    const second = getBatchAnalysis(db, made.batchId, { now: t2, bootstrap: 50 })!;
    expect(second.n_judgments).toBe(7);
    expect(second.generated_at).toBe(t2.toISOString());
    db.prepare("UPDATE raters SET excluded = 1, exclusion_reason = 'straight-lining' WHERE id = ?").run(made.raterIds[0]);
    const t3 = new Date('2026-02-01T12:00:00.000Z');
    const third = getBatchAnalysis(db, made.batchId, { now: t3, bootstrap: 50 })!;
    expect(third.generated_at).toBe(t3.toISOString());
    expect(third.n_judgments).toBe(4);
    expect(third.exclusions.raters).toEqual([{ rater: expect.any(String), reason: 'excluded: straight-lining', judgments: 3 }]);
    expect(third.raters.map((r) => r.rater)).not.toContain(third.exclusions.raters[0]!.rater);
  });

  it('leaves out screened-out raters and gold judgments, and reports attention accuracy from the gold pairs', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b', 'a'], ['b', 'b', 'a']] });
    db.prepare("UPDATE raters SET status = 'screened_out' WHERE id = ?").run(made.raterIds[2]);
    const scenario = makeScenario(db);
    const good = makeDialogue(db, { runId: made.runId, scenario, mode: 'AGENTS', model: 'test-model', turns: makeTurns(6, 12) });
    const bad = makeDialogue(db, { runId: made.runId, scenario, mode: 'SCRIPT', model: 'test-model', sampleIndex: 0, turns: makeTurns(6, 12) });
    const gold = makePair(db, { batchId: made.batchId, comparisonId: null, dialogueA: good, dialogueB: bad, kind: 'attention', expected: 'a' });
    makeJudgment(db, { pairId: gold, raterId: made.raterIds[0]!, winner: 'a' });
    makeJudgment(db, { pairId: gold, raterId: made.raterIds[1]!, winner: 'b' });
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    expect(report.n_judgments).toBe(4);
    expect(report.exclusions.raters).toEqual([expect.objectContaining({ reason: expect.stringMatching(/screened out/), judgments: 2 })]);
    expect(report.exclusions.dropped).toEqual([{ reason: 'gold (attention or onboarding) pairs', judgments: 2 }]);
    expect(report.raters.map((r) => r.attention_accuracy).sort()).toEqual([0, 1]);
  });

  it('when the cached report was computed by an earlier version of the analysis, recomputes it instead of serving it', () => {
    const { db } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['b', 'b']] });
    const stale = `analysis-1|${batchDataVersion(db, made.batchId)}|seed=20240601|bootstrap=0|target=0.05`;
    db.prepare("INSERT INTO analysis_cache (batch_id, data_version, result, computed_at) VALUES (?, ?, '{\"stale\":true}', '2026-01-01T00:00:00.000Z')").run(made.batchId, stale);
    const report = getBatchAnalysis(db, made.batchId, { now: NOW, bootstrap: 0 })!;
    expect(report.comparisons[0]).toMatchObject({ wins_a: 1, wins_b: 3 });
    expect(analysisComputedAt(db, made.batchId)).toBe(NOW.toISOString());
  });

  it('for a batch that does not exist, returns null', () => {
    const { db } = createTestDb();
    expect(getBatchAnalysis(db, 999, { now: NOW })).toBeNull();
  });
});

describe('simarena analyze --batch', () => {
  it('prints the batch\'s analysis as JSON, and a missing batch as a one-line error', async () => {
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['b', 'b']] });
    db.close();
    const run = await cli(['analyze', '--batch', String(made.batchId), '--bootstrap', '50', '--seed', '3'], { DATABASE_PATH: path });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.comparisons[0]).toMatchObject({ wins_a: 1, wins_b: 3 });
    expect(report.settings).toMatchObject({ seed: 3, bootstrap: 50, ties_allowed: false });
    const missing = await cli(['analyze', '--batch', 'nope'], { DATABASE_PATH: path });
    expect(missing).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "nope" (see "simarena batches list").' });
  });

  it('for a batch with no judgments, says so in one headline instead of "(none)" in every section, on stderr too, and exits 2', async () => {
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [[null, null], [null, null]] });
    const name = db.prepare('SELECT name FROM batches WHERE id = ?').pluck().get(made.batchId) as string;
    db.close();
    const headline = `No judgments yet: Batch ${made.batchId} (${name}) has no accepted judgment, so there is nothing to analyse. Run this again once raters have answered.`;
    const md = await cli(['analyze', '--batch', String(made.batchId), '--format', 'md', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(md.code).toBe(2);
    expect(md.stderr).toBe(`note: ${headline}`);
    expect(md.stdout).toContain(`**${headline}**`);
    expect(md.stdout).not.toContain('(none)');
    expect(md.stdout).not.toContain('## Win rates');
    const json = await cli(['analyze', '--batch', String(made.batchId), '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ n_judgments: 0, n_pairs: 0 });
    const html = await cli(['analyze', '--batch', String(made.batchId), '--format', 'html', '--bootstrap', '0'], { DATABASE_PATH: path });
    expect(html.code).toBe(2);
    expect(html.stdout).toContain(`<p role="status"><strong>${headline}</strong></p>`);
    expect(html.stdout).not.toContain('(none)');
  });
});

describe('simarena analyze --judgments on the batch\'s own judgments export', () => {
  it('with the same seed, gives the same bootstrap interval as the batch analysis, though the file lists judgments by pair and the batch reads them in the order they came', async () => {
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [[null], [null], [null], [null], [null], [null]], settings: { name: 'order' } });
    const raters = [0, 1, 2].map(() => makeRater(db, { batchId: made.batchId }));
    // Answers arrive pair by pair from the last pair to the first: the batch reads them by id, the export by pair.
    const votes: ('a' | 'b' | 'tie')[][] = [['a', 'a', 'b'], ['b', 'b', 'a'], ['a', 'a', 'a'], ['b', 'a', 'tie'], ['a', 'b', 'b'], ['a', 'a', 'b']];
    for (let p = made.pairIds.length - 1; p >= 0; p--) votes[p]!.forEach((winner, r) => makeJudgment(db, { pairId: made.pairIds[p]!, raterId: raters[r]!, winner, leftSide: (p + r) % 2 ? 'a' : 'b' }));
    const env = { DATABASE_PATH: path };
    const out = join(tempDir(), 'judgments.csv');
    expect((await cli(['export', '--batch', 'order', '--format', 'judgments-csv', '--out', out], env)).code).toBe(0);

    const fromBatch = JSON.parse((await cli(['analyze', '--batch', 'order', '--seed', '7', '--bootstrap', '500'], env)).stdout) as { comparisons: { n: number; bootstrap: { cluster: string; ci95: [number, number] } }[] };
    const fromFile = JSON.parse((await cli(['analyze', '--judgments', out, '--seed', '7', '--bootstrap', '500'], env)).stdout) as typeof fromBatch;
    expect(fromFile.comparisons[0]!.n).toBe(18);
    expect(fromFile.comparisons[0]!.bootstrap.cluster).toBe(fromBatch.comparisons[0]!.bootstrap.cluster);
    expect(fromFile.comparisons[0]!.bootstrap.ci95).toEqual(fromBatch.comparisons[0]!.bootstrap.ci95);
  });
});
