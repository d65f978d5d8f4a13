import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { renderAnalysisMarkdown } from '../../src/analysis/report-md.js';
import { updateBatchSettings } from '../../src/batches/batch.commands.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { parseBatchSettings } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

// The sensitivity section (issues 43, 51): only raters with a flag the batch declares grounds for exclusion are left
// out, never for reading time or one key alone; each comparison on pair majorities with rater-clustered intervals; the
// change in the estimate always given; "report it" only when a conclusion flips; and "too little is left" said plainly.

const SHARED = 'Both speakers stay polite and the second one reaches an agreement sooner than the first.';

type Test = ReturnType<typeof buildTestApp>;

async function analysisOf(t: Test, batchId: number): Promise<AnalysisReport> {
  const admin = await signIn(t.app, t.db, 'admin');
  const token = tokenFor(t.db, admin.email);
  return (await request(t.app).get(`/api/batches/${batchId}/analysis?max_age=0`).set('Authorization', `Bearer ${token}`).expect(200)).body as AnalysisReport;
}

/** Everyone took ten minutes a comparison (nobody under the reading floor); `raters` give the same distinctive reason. */
function withSharedReason(db: Db, raters: number[]) {
  db.prepare('UPDATE judgments SET active_ms = 600000').run();
  const set = db.prepare('UPDATE judgments SET reason = ? WHERE rater_id = ?');
  for (const id of raters) set.run(SHARED, id);
}

describe('the sensitivity section of a batch analysis (issue 51)', () => {
  it('GET /api/batches/:id/analysis, when five of six raters share a reason, says too little is left to conclude anything and gives the change', async () => {
    const t = buildTestApp();
    // Ten pairs; rater 0 judged every one (for a), raters 1-5 two pairs each (for b), all five with one reason.
    const votes = Array.from({ length: 10 }, (_, i) => ['a' as const, ...[1, 2, 3, 4, 5].map((r) => (Math.floor(i / 2) === r - 1 ? ('b' as const) : null))]);
    const batch = makeBatchWithJudgments(t.db, { votes });
    withSharedReason(t.db, batch.raterIds.slice(1));
    const section = (await analysisOf(t, batch.batchId)).sensitivity;
    expect(section?.dropped_raters).toHaveLength(5);
    expect(section?.dropped_judgments).toBe(10);
    expect(section?.comparisons[0]).toMatchObject({ too_little_left: true, flips: false, without: { raters: 1, decisive_pairs: 10, win_rate_a: 1, conclusion: 'too little to conclude' } });
    // Every pair split 1-1: no pair majority with everyone; all ten for a without them.
    expect(section?.comparisons[0]?.full).toMatchObject({ decisive_pairs: 0, win_rate_a: null });
    expect(section?.sentence).toContain('too little is left to conclude anything (1 rater(s), 10 decisive pair(s))');
    expect(section?.sentence).not.toContain('does not change');
    expect(section?.sentence).not.toContain('report it');
  });

  it('GET /api/batches/:id/analysis, when leaving out raters who share a reason turns a preference into no clear winner, gives the change and says to report it', async () => {
    const t = buildTestApp();
    // 40 pairs, two raters each: one of raters 0-5 (who always choose a and share a reason) and one of raters 6-17
    // (who choose a on even pairs and b on odd ones).
    const votes = Array.from({ length: 40 }, (_, i) => {
      const row: ('a' | 'b' | null)[] = new Array(18).fill(null);
      row[i % 6] = 'a';
      row[6 + (i % 12)] = i % 2 === 0 ? 'a' : 'b';
      return row;
    });
    const batch = makeBatchWithJudgments(t.db, { votes });
    withSharedReason(t.db, batch.raterIds.slice(0, 6));
    const report = await analysisOf(t, batch.batchId);
    const c = report.sensitivity?.comparisons[0];
    // With everyone, a wins the even pairs and the odd ones split evenly (no majority); without the six, a wins 20 of 40.
    expect(c?.full).toMatchObject({ decisive_pairs: 20, raters: 18, win_rate_a: 1, conclusion: 'SCRIPT:test-model preferred' });
    expect(c?.without).toMatchObject({ decisive_pairs: 40, raters: 12, win_rate_a: 0.5, conclusion: 'no clear winner' });
    expect(c?.change).toBeCloseTo(-0.5, 12);
    expect(c?.flips).toBe(true);
    expect(report.sensitivity?.sentence).toContain('goes from 100.0% to 50.0% (−50.0 points), and the conclusion flips from SCRIPT:test-model preferred to no clear winner: report it');
    // The rater-clustered interval is wider than the pairs-as-independent one: each rater judged 10 of the pairs.
    expect(c?.without.design_effect).toBeGreaterThan(1);
    const markdown = renderAnalysisMarkdown(report);
    expect(markdown).toContain('Sensitivity to flagged raters');
    expect(markdown).toContain('−50.0');
  });

  it('GET /api/batches/:id/analysis, when raters are flagged only for reading time, leaves nobody out and shows each flag with its rule', async () => {
    const t = buildTestApp();
    const votes = Array.from({ length: 12 }, (_, i) => ['a', 'b', i % 3 === 0 ? 'b' : 'a'] as ('a' | 'b')[]);
    const batch = makeBatchWithJudgments(t.db, { votes });
    // Everyone answered in a second: under the reading floor, which is never grounds for exclusion.
    t.db.prepare('UPDATE judgments SET active_ms = 1000').run();
    const report = await analysisOf(t, batch.batchId);
    expect(report.sensitivity?.dropped_raters).toEqual([]);
    expect(report.sensitivity?.sentence).toBe(
      'No rater has a flag the batch declares grounds for exclusion (pasted reasons, implausible telemetry, same reason as another rater, reason copied from the page): no rater is left out.',
    );
    const flags = report.raters.map((r) => r.flags.map((f) => f.flag));
    expect(flags.every((f) => f.includes('under reading time') && f.includes('too fast'))).toBe(true);
    const reading = report.raters[0]?.flags.find((f) => f.flag === 'under reading time');
    expect(reading).toEqual({ flag: 'under reading time', rule: expect.stringContaining('at 500 words a minute (never grounds for exclusion)'), exclusion_ground: false });
    const markdown = renderAnalysisMarkdown(report);
    expect(markdown).toMatch(/\| flags \|/);
    expect(markdown).toContain('too fast, under reading time');
    expect(markdown).toContain('under reading time: at least 50% of the rater');
  });

  it('batch settings, when exclusionGrounds names reading time or one key, are refused by name; once judgments exist they are frozen', () => {
    const t = buildTestApp();
    expect(() => parseBatchSettings({ name: 'x', runs: ['r'], comparisons: [['SCRIPT:m', 'AGENTS:m']], exclusionGrounds: ['one key', 'pasted reasons'] })).toThrow(
      '"one key" is never grounds for exclusion',
    );
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b']] });
    const row = getBatchRow(t.db, batch.batchId);
    const settings = readBatchSettings(row as NonNullable<typeof row>);
    expect(() => updateBatchSettings(t.db, batch.batchId, { ...settings, exclusionGrounds: ['implausible telemetry'] }, { actor: 'test', now: new Date() })).toThrow(
      'these settings are frozen: exclusionGrounds',
    );
  });
});
