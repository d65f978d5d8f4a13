// The run choices of the new-batch form (and the dialogue browser's run filter) list each run's conditions from its
// complete dialogues; migration 025's index dialogues_by_run lets that read the index alone (30 ms per listing at
// 48,000 dialogues without it, twice on the new-batch page). Checked against what the test's own rows say.
import { describe, expect, it } from 'vitest';
import { listRunChoices } from '../../src/console/batch-form.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

describe('run choices', () => {
  it('GET /console/batches/new, with runs of complete, failed and derived dialogues in several conditions, lists each run\'s complete dialogues and conditions as the rows hold them', async () => {
    const t = buildTestApp();
    const scenario = makeScenario(t.db);
    const runA = makeRun(t.db, { name: 'choice-a', modes: ['SCRIPT', 'AGENTS'] });
    const runB = makeRun(t.db, { name: 'choice-b', modes: ['AGENTS'] });
    const empty = makeRun(t.db, { name: 'choice-empty' });
    makeDialogue(t.db, { runId: runA, scenario, mode: 'SCRIPT', model: 'm1' });
    makeDialogue(t.db, { runId: runA, scenario, mode: 'AGENTS', model: 'm1', sampleIndex: 1 });
    makeDialogue(t.db, { runId: runA, scenario, mode: 'AGENTS', model: 'm2', sampleIndex: 2, state: 'failed' });
    const derived = makeDialogue(t.db, { runId: runA, scenario, mode: 'MINDREADERS', model: 'm1', sampleIndex: 3 });
    t.db.prepare("UPDATE dialogues SET origin = 'derived' WHERE id = ?").run(derived);
    makeDialogue(t.db, { runId: runB, scenario, mode: 'AGENTS', model: 'm3' });
    makeDialogue(t.db, { runId: runB, scenario, mode: 'AGENTS', model: 'm3', sampleIndex: 1 });

    // Per run, from the rows: complete dialogues (any origin) and the distinct conditions of the non-derived ones.
    const fromRows = (runId: number) => {
      const rows = t.db.prepare('SELECT mode, model, state, origin FROM dialogues WHERE run_id = ?').all(runId) as { mode: string; model: string; state: string; origin: string }[];
      const complete = rows.filter((r) => r.state === 'complete');
      return { complete: complete.length, conditions: [...new Set(complete.filter((r) => r.origin !== 'derived').map((r) => `${r.mode}:${r.model}`))].sort() };
    };
    const listed = listRunChoices(t.db);
    expect(listed.map((r) => r.id)).toEqual([empty, runB, runA]);
    for (const run of [runA, runB, empty]) {
      const choice = listed.find((r) => r.id === run);
      expect({ complete: choice?.complete, conditions: choice?.conditions }).toEqual(fromRows(run));
    }
    expect(fromRows(runA)).toEqual({ complete: 3, conditions: ['AGENTS:m1', 'SCRIPT:m1'] });

    const admin = await signIn(t.app, t.db, 'admin');
    const page = (await admin.agent.get('/console/batches/new').expect(200)).text;
    expect(page).toContain('3 complete dialogues: AGENTS:m1, SCRIPT:m1)');
    expect(page).toContain('2 complete dialogues: AGENTS:m3)');
    expect(page).toContain('0 complete dialogues: none)');

    const plan = t.db
      .prepare("EXPLAIN QUERY PLAN SELECT DISTINCT mode, model FROM dialogues WHERE run_id = ? AND state = 'complete' AND origin <> 'derived'")
      .all(runA) as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toContain('USING COVERING INDEX dialogues_by_run');
  });
});
