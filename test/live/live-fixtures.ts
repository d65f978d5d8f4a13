import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { createLlmClient } from '../../src/generation/llm-client.js';
import { createAgentPlayer } from '../../src/live/live-agent.js';
import { createLiveHub, type LiveHub } from '../../src/live/live-hub.js';
import type { LiveEvent } from '../../src/live/live-events.js';
import type { Sink } from '../../src/live/presence.js';
import { insertRater } from '../../src/rating/rating.queries.js';
import { newPublicId } from '../../src/web/ids.js';
import type { FakeLlm } from '../helpers/fake-llm.js';
import { launchReady, makeScenario } from '../helpers/factories.js';

// A role-play batch, its players and a hub on a clock the test moves: the relay without HTTP.

export const START = new Date('2026-04-01T10:00:00.000Z');

/** A clock that stands still until the test moves it. */
export function manualClock(start = START) {
  let now = start.getTime();
  return { clock: () => new Date(now), advance: (ms: number) => void (now += ms), at: () => now };
}

/** Numbers drawn in order (then 0.5): which character each player gets, the agent's pace. */
export function scripted(...values: number[]) {
  return () => values.shift() ?? 0.5;
}

export type RoleplayOptions = { partner?: Record<string, unknown>; turns?: Record<string, unknown>; provider?: Record<string, unknown> };

/** An open role-play batch over one scenario whose characters' secrets and goals carry markers. */
export function openRoleplayBatch(db: Db, options: RoleplayOptions = {}) {
  const scenario = makeScenario(db, { relationship: 'stranger', goals: ['GOAL-ONE borrow money', 'GOAL-TWO keep savings'], secrets: ['SECRET-ONE in debt', 'SECRET-TWO failed an exam'] });
  const created = createBatch(
    db,
    launchReady({ name: 'Live', task: 'roleplay', run: 'live', consent: 'Your partner may be a person or an AI.', partner: { waitSeconds: 60, awaySeconds: 10, ...options.partner }, turns: { max: 6, min: 4, turnSeconds: 30, ...options.turns }, ...(options.provider ? { provider: options.provider } : {}) }),
    { actor: 'test', now: START },
  );
  transitionBatch(db, created.batchId, 'open', 'test', START);
  return { batchId: created.batchId, runId: created.run?.id ?? 0, scenario };
}

/** A rater of the batch who has read the instructions (status "rating"), from an address of their own unless given. */
export function makePlayer(db: Db, batchId: number, options: { address?: string } = {}): number {
  return insertRater(
    db,
    {
      batchId,
      publicId: newPublicId(),
      provider: 'link',
      participantId: newPublicId(9),
      studyId: null,
      sessionId: newPublicId(),
      submitTo: null,
      userAgent: 'test',
      addressHash: options.address ?? newPublicId(),
      status: 'rating',
    },
    START,
  );
}

/** A page's stream that keeps what it was sent. */
export function recordingSink(): Sink & { events: { event: LiveEvent; id?: number }[]; closed: boolean; of: <T extends LiveEvent['type']>(type: T) => Extract<LiveEvent, { type: T }>[] } {
  const events: { event: LiveEvent; id?: number }[] = [];
  const sink = {
    events,
    closed: false,
    send(event: LiveEvent, id?: number) {
      events.push({ event, id });
    },
    close() {
      sink.closed = true;
    },
    of<T extends LiveEvent['type']>(type: T) {
      return events.map((e) => e.event).filter((e): e is Extract<LiveEvent, { type: T }> => e.type === type);
    },
  };
  return sink;
}

export function hubFor(db: Db, clock: () => Date, options: { random?: () => number; fake?: FakeLlm } = {}): LiveHub {
  const fake = options.fake;
  const agent = fake ? createAgentPlayer({ db, clock, llmFor: () => createLlmClient({ baseUrl: fake.baseUrl, apiKey: 'k' }) }) : null;
  return createLiveHub({ db, clock, random: options.random ?? (() => 0.3), agent });
}
