// The run page lists a run's dialogues 50 at a time, failed ones first, then by scenario, sample and mode. Without an
// index in that order every dialogue of the run was read and sorted for each page (at 100,000 dialogues the first
// page took 66–110 ms, a middle one 340–430 ms: scripts/bench/run-counts.ts); migration 079 gives the order. Checked
// against the order the test's own rows call for, and the page read through the index.
import { describe, expect, it } from 'vitest';
import { listRunDialogues } from '../../src/console/run-list.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

describe('the run page\'s dialogues', () => {
  it('GET /console/runs/:id, for a run of failed and complete dialogues of two scenarios, lists failed first, then by scenario, sample and mode, a page at a time, read in the index\'s order', async () => {
    const t = buildTestApp();
    const [early, late] = [makeScenario(t.db, { id: 'aa-scenario' }), makeScenario(t.db, { id: 'zz-scenario' })];
    const runId = makeRun(t.db, { name: 'ordered', modes: ['SCRIPT', 'AGENTS'] });
    const made = [
      { scenario: late, mode: 'SCRIPT', sampleIndex: 0, state: 'complete' },
      { scenario: early, mode: 'SCRIPT', sampleIndex: 1, state: 'complete' },
      { scenario: late, mode: 'AGENTS', sampleIndex: 0, state: 'failed' },
      { scenario: early, mode: 'AGENTS', sampleIndex: 0, state: 'complete' },
      { scenario: early, mode: 'SCRIPT', sampleIndex: 0, state: 'complete' },
      { scenario: early, mode: 'AGENTS', sampleIndex: 2, state: 'failed' },
    ] as const;
    const ids = made.map((d) => makeDialogue(t.db, { runId, scenario: d.scenario, mode: d.mode, sampleIndex: d.sampleIndex, state: d.state }));
    const rank = (i: number) => {
      const d = made[i] as (typeof made)[number];
      return [d.state === 'failed' ? 0 : 1, d.scenario.scenarioId, d.sampleIndex, d.mode].join('|');
    };
    const expected = made.map((_, i) => i).sort((x, y) => (rank(x) < rank(y) ? -1 : 1)).map((i) => ids[i]);
    expect(listRunDialogues(t.db, runId, 50, 0).map((d) => d.id)).toEqual(expected);
    expect([...listRunDialogues(t.db, runId, 4, 0), ...listRunDialogues(t.db, runId, 4, 4)].map((d) => d.id)).toEqual(expected);

    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = (await researcher.agent.get(`/console/runs/${runId}?per_page=2&page=2`).expect(200)).text;
    const shown = [...page.matchAll(/href="\/console\/dialogues\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(shown.filter((id) => ids.includes(id))).toEqual(expected.slice(2, 4));

    const plan = t.db
      .prepare("EXPLAIN QUERY PLAN SELECT d.id FROM dialogues d WHERE d.run_id = ? ORDER BY (d.state = 'failed') DESC, d.scenario_id, d.sample_index, d.mode LIMIT 50")
      .all(runId) as { detail: string }[];
    const details = plan.map((p) => p.detail).join('\n');
    expect(details).toContain('dialogues_run_page');
    expect(details).not.toContain('TEMP B-TREE');
  });
});
