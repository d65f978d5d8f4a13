import { afterEach, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { LiveHub } from '../../src/live/live-hub.js';
import { serve } from '../helpers/browser.js';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { internalIds, leaks, padInternalIds } from '../rating/leak-check.js';
import type { Exchange } from '../rating/rating-fixtures.js';
import { enter } from './live-http.js';

// Blinding on the participant's side (issue 52): nothing a role-play page or its event stream sends says whether the
// partner is a person or an agent, which model, which mode, which run, or an internal id; the agent's turn arrives
// shaped as a person's, and not at once.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MODEL = 'blindcheck-model-7';

async function setup(fake: FakeLlm) {
  const t = buildTestApp({ env: { OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'k' } });
  padInternalIds(t.db);
  const scenario = makeScenario(t.db, { relationship: 'acquaintance', secrets: ['SECRET-OF-ONE', 'SECRET-OF-TWO'], goals: ['GOAL-OF-ONE', 'GOAL-OF-TWO'] });
  const now = new Date();
  const created = createBatch(
    t.db,
    launchReady({ name: 'Blind', task: 'roleplay', run: 'blindcheck-run', scenarios: [scenario.scenarioId], partner: { waitSeconds: 5, sameAddress: true, fallback: { model: MODEL, wordsPerMinute: 400 } }, turns: { max: 4, min: 2, turnSeconds: 30 } }),
    { actor: 'test', now },
  );
  transitionBatch(t.db, created.batchId, 'open', 'test', now);
  const server = await serve(t.app);
  cleanups.push(() => server.close(), () => (t.app.locals.liveHub as LiveHub).stop());
  return { ...t, base: server.url, publicId: t.db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string };
}

/** Every response of a player's walk as an exchange, for the leak check. */
async function fetched(url: string): Promise<Exchange> {
  const res = await fetch(url);
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => void (headers[name] = value));
  return { method: 'GET', url, status: res.status, headers: withoutHelmetAgentCluster(headers), body: await res.text() };
}

/** Helmet's Origin-Agent-Cluster header names an "agent" that has nothing to do with the partner. */
function withoutHelmetAgentCluster(headers: Record<string, unknown>): Record<string, unknown> {
  const { 'origin-agent-cluster': _cluster, ...rest } = headers;
  return rest;
}

describe('role-play blinding', () => {
  it('a player whose partner is the agent gets pages and events that name no mode, model, run or id, and the agent\'s turn shaped as a person\'s, after a pause', async () => {
    const fake = await startFakeLlm();
    cleanups.push(() => fake.close());
    const env = await setup(fake);
    const lone = await enter(env.base, env.publicId);
    const stream = lone.events();
    cleanups.push(() => stream.close());
    await stream.next((d) => d.type === 'go', 15_000);
    const page = await fetched(lone.playUrl);
    const character = Number(/data-character="(\d)"/.exec(page.body)?.[1]);
    expect(page.body).toContain(character === 1 ? 'SECRET-OF-ONE' : 'SECRET-OF-TWO');
    expect(page.body).not.toContain(character === 1 ? 'SECRET-OF-TWO' : 'SECRET-OF-ONE');
    expect(page.body).not.toContain(character === 1 ? 'GOAL-OF-TWO' : 'GOAL-OF-ONE');
    if (character === 2) await stream.next((d) => d.type === 'turn', 15_000);
    else await lone.turn({ key: 'k-lone-000001', text: 'Hello, how are you today?' });
    const agentTurn = await stream.next((d) => d.type === 'turn' && d.speaker !== character, 15_000);
    const human = await env.db.prepare('SELECT count(*) FROM live_turns WHERE rater_id IS NOT NULL').pluck().get();
    // A person's turn and the agent's carry the same fields.
    expect(Object.keys(agentTurn.data as object).sort()).toEqual(['display', 'idx', 'kind', 'name', 'speaker', 'text', 'type']);
    if (Number(human) > 0) {
      const mine = stream.events.find((e) => (e.data as { type: string; speaker?: number }).type === 'turn' && (e.data as { speaker: number }).speaker === character);
      expect(Object.keys(mine?.data as object).sort()).toEqual(Object.keys(agentTurn.data as object).sort());
    }
    const shownAfterMs = env.db.prepare("SELECT (julianday(sent_at) - julianday(turn_started_at)) * 86400000 FROM live_turns WHERE rater_id IS NULL ORDER BY idx LIMIT 1").pluck().get() as number;
    expect(shownAfterMs).toBeGreaterThanOrEqual(2_400);
    const exchanges: Exchange[] = [page, ...(await Promise.all(['/static/js/live.js', '/static/js/rater.js', '/static/css/rater.css', '/static/css/live.css'].map((p) => fetched(`${env.base}${p}`))))];
    exchanges.push({ method: 'GET', url: 'events', status: 200, headers: withoutHelmetAgentCluster(stream.headers()), body: JSON.stringify(stream.events) });
    const ids = internalIds(env.db);
    expect(leaks(exchanges, [MODEL, 'blindcheck', 'human', 'agent', 'collected', 'fallback'], ids)).toEqual([]);
  });
});
