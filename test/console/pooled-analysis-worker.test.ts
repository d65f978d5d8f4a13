// The console's pooled analysis computed in the analysis worker process, off the request thread (issue 12, point 3):
// the same report as computed in process, other requests answered meanwhile, refusals as before.
import { describe, expect, it } from 'vitest';
import { answeredWhileWorkerComputes } from '../helpers/worker-ordering.js';
import { seedStoredJudgments } from '../../scripts/bench/support/bench-study.js';
import { awaitPooledAnalysis, pooledAnalysisRunning } from '../../src/analysis/background-analysis.js';
import type { PooledReport } from '../../src/analysis/pooled-analysis.js';
import { computePooledAnalysis, PooledBatchesError } from '../../src/analysis/pooled-batches.js';
import { CONSOLE_POOLED_BOOTSTRAP } from '../../src/console/pooled-analysis.routes.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { rejectionOf } from '../helpers/rejection.js';

const NOW = new Date('2026-03-01T10:00:00Z');
const clock = () => NOW;

/** Two rounds of one comparison with different votes, so that the batches' rates and the pooled one differ. */
function twoRounds(t: ReturnType<typeof buildTestApp>) {
  const first = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b'], ['a', 'a', 'a'], ['b', 'a', 'tie']] });
  const second = makeBatchWithJudgments(t.db, { votes: [['b', 'a', 'b'], ['a', 'b', 'b'], ['b', 'b', 'a']] });
  return [first.batchId, second.batchId];
}

// The page's own number formats (views/console/pooled-analysis.ejs), to find the in-process report's figures in it.
const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(1)}%`);
const ci = (c: [number, number] | null) => (c ? `[${(100 * c[0]).toFixed(1)}, ${(100 * c[1]).toFixed(1)}]` : '—');

const refusal = (promise: Promise<unknown>) => rejectionOf(promise, PooledBatchesError);

describe('the pooled analysis, computed in the analysis worker', () => {
  it('awaitPooledAnalysis, on a file database, computes in the worker the same report as computePooledAnalysis in process', async () => {
    const t = buildTestApp();
    const ids = twoRounds(t);
    const options = { now: NOW, bootstrap: 50, seed: 7 };

    const pooling = awaitPooledAnalysis(t.db, ids, options);
    expect(pooledAnalysisRunning(t.db)).toBe(true);
    const viaWorker = await pooling;
    expect(pooledAnalysisRunning(t.db)).toBe(false);

    const inProcess = computePooledAnalysis(t.db, ids, options);
    expect(viaWorker).toEqual(inProcess);
    expect(viaWorker.settings).toMatchObject({ seed: 7, bootstrap: 50 });
    expect(viaWorker.comparisons[0]?.batches.map((b) => b.batch_id)).toEqual(ids);
  });

  it('awaitPooledAnalysis, on a file database, with one batch id twice or an unknown id, rejects with the PooledBatchesError, status and message computePooledAnalysis throws', async () => {
    const t = buildTestApp();
    const [first] = twoRounds(t) as [number, number];
    const cases: [number[], number, string][] = [
      [[first, first], 400, 'pooling needs at least two different batches'],
      [[first, 9999], 404, 'no batch 9999'],
    ];
    for (const [ids, status, message] of cases) {
      const expected = await refusal(Promise.resolve().then(() => computePooledAnalysis(t.db, ids, { now: NOW, bootstrap: 10 })));
      expect([expected.status, expected.message]).toEqual([status, message]);
      const viaWorker = await refusal(awaitPooledAnalysis(t.db, ids, { now: NOW, bootstrap: 10 }));
      expect({ message: viaWorker.message, status: viaWorker.status, code: viaWorker.code }).toEqual({ message: expected.message, status: expected.status, code: expected.code });
    }
  });

  it('GET /console/analysis?batches=ID,ID, on a file database, shows the figures of the report computed in process with the page\'s bootstrap', async () => {
    const t = buildTestApp({ clock });
    const ids = twoRounds(t);
    const researcher = await signIn(t.app, t.db, 'researcher');

    const page = await researcher.agent.get(`/console/analysis?batches=${ids.join(',')}`).expect(200);
    const expected: PooledReport = computePooledAnalysis(t.db, ids, { now: NOW, bootstrap: CONSOLE_POOLED_BOOTSTRAP });
    expect(page.text).toContain(`${expected.settings.bootstrap} bootstrap replicates`);
    expect(expected.comparisons.length).toBeGreaterThan(0);
    for (const c of expected.comparisons) {
      expect(page.text).toContain(`<td data-testid="pooled-rate">${pct(c.pooled.win_rate_a)}</td><td>${ci(c.pooled.ci95)}</td><td>${ci(c.pooled.bootstrap_ci95)}</td>`);
      for (const b of c.batches) expect(page.text).toContain(`<td>${b.batch_id}</td><td>${b.wins_a} / ${b.wins_b} / ${b.ties}</td><td>${pct(b.win_rate_a)}</td><td>${ci(b.ci95)}</td>`);
    }
    expect(expected.bradley_terry?.conditions.length).toBe(2);
    for (const c of expected.bradley_terry?.conditions ?? []) {
      const interval = c.ci95 ? `[${c.ci95[0].toFixed(1)}, ${c.ci95[1].toFixed(1)}]` : '—';
      expect(page.text).toContain(`<td>${c.condition}</td><td>${c.score === null ? '—' : c.score.toFixed(1)}</td><td>${interval}</td>`);
    }
  });

  it('GET /healthz, sent while GET /console/analysis?batches=ID,ID is pooling a large batch in the worker, is answered before the pooled page', async () => {
    const t = buildTestApp({ clock });
    const ids = twoRounds(t);
    // One seeding per database (it names its run): the first round large, the second as made.
    seedStoredJudgments(t.db, ids[0] as number, 20_000);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const done = await answeredWhileWorkerComputes(t.app, () => pooledAnalysisRunning(t.db), researcher.agent.get(`/console/analysis?batches=${ids.join(',')}`));
    expect(done.status).toBe(200);
    expect(done.text).toContain('Bradley–Terry across all batches');
  }, 90_000);

  it('GET /console/analysis, with one batch id twice, shows the form to choose; with an unknown id, answers 404 naming it, as before', async () => {
    const t = buildTestApp({ clock });
    const [first] = twoRounds(t) as [number, number];
    const researcher = await signIn(t.app, t.db, 'researcher');

    const form = await researcher.agent.get(`/console/analysis?batches=${first},${first}`).expect(200);
    expect(form.text).toContain('Batches to pool');
    expect(form.text).not.toContain('pooled-win-rates');
    expect(pooledAnalysisRunning(t.db)).toBe(false);
    const unknown = await researcher.agent.get(`/console/analysis?batches=${first},9999`).expect(404);
    expect(unknown.text).toContain('No batch has the id 9999.');
  });
});
