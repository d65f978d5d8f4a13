// `simarena analyze --batches` on batches in a real SQLite database: pooled counts, exclusions applied per batch, and
// one-line errors.
import { describe, expect, it } from 'vitest';
import { makeBatchWithJudgments, makeRater } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb } from '../helpers/test-db.js';

describe('simarena analyze --batches', () => {
  it('simarena analyze --batches ID,ID --format json, for two rounds of the same comparison, reports per-batch and pooled counts and the heterogeneity test', async () => {
    const { db, path } = createTestDb();
    const first = makeBatchWithJudgments(db, { votes: [['a', 'a', 'b'], ['a', 'a', 'a'], ['b', 'a', 'a']] });
    const second = makeBatchWithJudgments(db, { votes: [['b', 'b', 'b'], ['a', 'b', 'b'], ['b', 'b', null]] });
    // An excluded rater's judgments stay out of the pool as they stay out of the batch's own analysis.
    db.prepare('UPDATE raters SET excluded = 1, exclusion_reason = ? WHERE id = ?').run('speeding', second.raterIds[0]);
    makeRater(db, { batchId: second.batchId });
    db.close();
    const run = await cli(['analyze', '--batches', `${first.batchId},${second.batchId}`, '--bootstrap', '50', '--seed', '4'], { DATABASE_PATH: path });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.kind).toBe('pooled');
    const c = report.comparisons[0];
    expect(c).toMatchObject({ a: 'SCRIPT:test-model', b: 'AGENTS:test-model' });
    expect(c.batches.map((b: { batch_id: number; wins_a: number; wins_b: number }) => [b.batch_id, b.wins_a, b.wins_b])).toEqual([
      [first.batchId, 7, 2],
      [second.batchId, 0, 5],
    ]);
    expect(c.pooled).toMatchObject({ wins_a: 7, wins_b: 7, win_rate_a: 0.5 });
    expect(c.heterogeneity.df).toBe(1);
    expect(c.heterogeneity.flagged).toBe(true);
    expect(report.bradley_terry.conditions.map((x: { condition: string }) => x.condition)).toEqual(['AGENTS:test-model', 'SCRIPT:test-model']);
  });

  it('simarena analyze --batches with --format md prints the pooled tables; with one batch or an unknown one it fails with one line', async () => {
    const { db, path } = createTestDb();
    const first = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['a', 'a']] });
    const second = makeBatchWithJudgments(db, { votes: [['a', 'b'], ['b', 'a']] });
    db.close();
    const md = await cli(['analyze', '--batches', `${first.batchId},${second.batchId}`, '--format', 'md', '--bootstrap', '20'], { DATABASE_PATH: path });
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('# simarena pooled analysis');
    expect(md.stdout).toContain('## Bradley-Terry across all batches');
    const one = await cli(['analyze', '--batches', String(first.batchId)], { DATABASE_PATH: path });
    expect(one).toMatchObject({ code: 1, stderr: 'error: pooling needs at least two different batches' });
    const unknown = await cli(['analyze', '--batches', `${first.batchId},nope`], { DATABASE_PATH: path });
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "nope" (see "simarena batches list").' });
    const html = await cli(['analyze', '--batches', `${first.batchId},${second.batchId}`, '--format', 'html'], { DATABASE_PATH: path });
    expect(html.stderr).toBe('error: a pooled analysis is printed as json or md');
    const anchor = await cli(['analyze', '--batch', String(first.batchId), '--anchor', 'SCRIPT:test-model'], { DATABASE_PATH: path });
    expect(anchor.stderr).toBe('error: --anchor goes with --batches');
    const both = await cli(['analyze', '--batch', '1', '--batches', '1,2'], { DATABASE_PATH: path });
    expect(both.stderr).toBe('error: give either --batch ID or --judgments FILE.csv (or --batches ID,ID,... to pool batches)');
  });
});
