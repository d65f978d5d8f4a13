// Issue 50, item 11: the study follows its batch. A batch that closes by itself (a sequential stop), is paused or has
// every pair full stops taking raters; the server then pauses or stops its Prolific study, through the ledger, so
// Prolific sends nobody who would be told the study is closed.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { loadConfig } from '../../src/config.js';
import { followNotice, followPlatforms } from '../../src/recruiting/platform-follow.js';
import { getPlatformFollow } from '../../src/recruiting/platform-follows.queries.js';
import { listBatchOperations, markOperationAnswered, markOperationSent, recordOperation } from '../../src/recruiting/platform-operations.queries.js';
import { getBatch } from '../../src/batches/batch.commands.js';
import { cli } from '../helpers/run-cli.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { mturkSetup } from './mturk-helpers.js';
import { participantIds, prolificSetup, walkFromProlific } from './prolific-helpers.js';

type Setup = Awaited<ReturnType<typeof prolificSetup>>;

/** Four pairs, one judgment each, two raters of two pairs: a sequential rule whose last look is when every pair is complete. */
const SEQUENTIAL = { judgmentsPerPair: 1, perRaterCap: 2, plannedRaters: 2, stopping: { looks: 2, spending: 'pocock' } };

async function published(setup: Setup) {
  const out = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
  expect(out.code).toBe(0);
  return [...setup.fake.studies.values()][0] as NonNullable<ReturnType<typeof setup.fake.studies.get>>;
}

async function rateAll(setup: Setup, studyId: string, n: number) {
  for (const id of participantIds(n)) {
    const { submission, url } = setup.fake.startSubmission(studyId, id);
    const code = await walkFromProlific(setup, url, 'complete');
    if (code) setup.fake.completeSubmission(submission.id, code);
  }
}

/** The console's batch page of a server with `env`, over the setup's database, as an admin sees it. */
async function consolePage(setup: Setup, env: Record<string, string>): Promise<string> {
  const app = createApp({ db: setup.db, config: loadConfig(env), logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET });
  const admin = await signIn(app, setup.db, 'admin', { behindTls: true });
  const res = await admin.agent.get(`/console/batches/${setup.seeded.batchId}`).expect(200);
  return res.text.replace(/&#39;/g, "'");
}

const followDeps = (setup: Setup, env: Record<string, string> = setup.cliEnv, laterMs = 0) => ({ db: setup.db, config: loadConfig(env), clock: () => new Date(Date.now() + laterMs), actor: 'server' });
const transitions = (setup: Setup) => setup.fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/transition/')).map((r) => (r.body as { action: string }).action);

describe('the Prolific study follows its batch', () => {
  it('followPlatforms, when a sequential batch published on the fake Prolific closes itself at its last look, stops the study once, recorded in the ledger', async () => {
    const setup = await prolificSetup({ settings: SEQUENTIAL });
    const study = await published(setup);
    await rateAll(setup, study.id, 2);
    expect(getBatch(setup.db, setup.seeded.batchId)?.state).toBe('closed');
    expect(study.status).toBe('ACTIVE');
    const done = await followPlatforms(followDeps(setup));
    expect(done).toEqual([{ batchId: setup.seeded.batchId, platform: 'prolific', target: 'stopped', reached: true, problem: null }]);
    expect(study.status).toBe('AWAITING REVIEW');
    const stop = listBatchOperations(setup.db, setup.seeded.batchId, 'prolific').find((o) => o.kind === 'stop');
    expect(stop).toMatchObject({ state: 'confirmed', actor: 'server', platform_object_id: study.id });
    expect(JSON.parse(stop?.request ?? '{}')).toEqual({ action: 'STOP', why: 'the batch is closed' });
    // In step: the next checks send nothing, and read nothing from Prolific.
    const asked = setup.fake.requests.length;
    expect(await followPlatforms(followDeps(setup))).toEqual([]);
    expect(setup.fake.requests.length).toBe(asked);
    expect(transitions(setup)).toEqual(['PUBLISH', 'STOP']);
  });

  it('followPlatforms, for a batch paused, reopened, full and then given room, pauses and starts the study it paused, but never starts one Prolific paused itself', async () => {
    const setup = await prolificSetup({ settings: { judgmentsPerPair: 1, perRaterCap: 2, plannedRaters: 2 } });
    const study = await published(setup);
    const id = setup.seeded.batchId;
    expect(await followPlatforms(followDeps(setup))).toEqual([]);
    transitionBatch(setup.db, id, 'pause', 'admin', new Date());
    await followPlatforms(followDeps(setup));
    expect(study.status).toBe('PAUSED');
    transitionBatch(setup.db, id, 'open', 'admin', new Date());
    await followPlatforms(followDeps(setup));
    expect(study.status).toBe('ACTIVE');
    // Every pair full: nobody can be let in, so the study is paused; K raised gives room, and it is started again.
    await rateAll(setup, study.id, 2);
    expect(getBatch(setup.db, id)?.state).toBe('open');
    await followPlatforms(followDeps(setup));
    expect(study.status).toBe('PAUSED');
    expect(getPlatformFollow(setup.db, id, 'prolific')).toMatchObject({ target: 'paused', why: 'every pair has its 1 judgment', acted: 1 });
    setup.db.prepare("UPDATE batches SET settings = json_set(settings, '$.judgmentsPerPair', 2) WHERE id = ?").run(id);
    await followPlatforms(followDeps(setup));
    expect(study.status).toBe('ACTIVE');
    // Prolific pauses a study itself (its screen-out slots used up): the server leaves it paused.
    study.status = 'PAUSED';
    expect(await followPlatforms(followDeps(setup))).toEqual([]);
    expect(study.status).toBe('PAUSED');
    expect(transitions(setup)).toEqual(['PUBLISH', 'PAUSE', 'START', 'PAUSE', 'START']);
  });

  it('followPlatforms, while a bonus payment of the batch is left unclear, still pauses the study and leaves the payment for settle', async () => {
    const setup = await prolificSetup();
    const study = await published(setup);
    const [who] = participantIds(1) as [string];
    const { submission } = setup.fake.startSubmission(study.id, who);
    const now = new Date();
    const pay = recordOperation(
      setup.db,
      { platform: 'prolific', batchId: setup.seeded.batchId, kind: 'bonus_pay', idempotencyKey: 'prolific:test:bonus_pay', platformObjectId: 'bulk-1', request: {}, actor: 'cli', lines: [{ participantId: who, submissionId: submission.id, amountMinor: 50 }] },
      now,
    ).operation;
    markOperationSent(setup.db, pay.id, now);
    markOperationAnswered(setup.db, pay.id, { state: 'unknown', error: 'no answer' }, now);
    transitionBatch(setup.db, setup.seeded.batchId, 'pause', 'admin', now);
    expect(await followPlatforms(followDeps(setup))).toMatchObject([{ target: 'paused', reached: true }]);
    expect(study.status).toBe('PAUSED');
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'prolific').find((o) => o.id === pay.id)?.state).toBe('unknown');
  });

  it('followNotice (the batch page), when the batch is paused and the server holds no Prolific token, says loudly that the study must be paused by hand, with its link', async () => {
    const setup = await prolificSetup();
    const study = await published(setup);
    transitionBatch(setup.db, setup.seeded.batchId, 'pause', 'admin', new Date());
    const noToken = { ...setup.cliEnv, PROLIFIC_API_TOKEN: '' };
    const [result] = await followPlatforms(followDeps(setup, noToken));
    expect(result).toMatchObject({ reached: false, problem: expect.stringContaining('PROLIFIC_API_TOKEN is not set') });
    expect(study.status).toBe('ACTIVE');
    const batch = getBatch(setup.db, setup.seeded.batchId);
    const notice = batch && followNotice(setup.db, loadConfig(noToken), batch);
    expect(notice).toEqual({
      loud: true,
      link: `https://app.prolific.com/researcher/workspaces/studies/${study.id}`,
      text: `The batch is paused, but the server holds no PROLIFIC_API_TOKEN, so its Prolific study ${study.id} may still send participants: pause the study by hand on Prolific.`,
    });
    // The batch page of a server without the token shows it, with the study's link.
    const page = await consolePage(setup, noToken);
    expect(page).toContain('data-testid="platform-follow"');
    expect(page).toContain('<strong>Recruiting is still open on the platform.</strong>');
    expect(page).toContain(`href="https://app.prolific.com/researcher/workspaces/studies/${study.id}"`);
    // A minute on (a refusal is not tried on every check), with the token, the server pauses it and the notice goes.
    expect(await followPlatforms(followDeps(setup))).toEqual([]);
    await followPlatforms(followDeps(setup, setup.cliEnv, 61_000));
    expect(study.status).toBe('PAUSED');
    expect(batch && followNotice(setup.db, loadConfig(setup.cliEnv), batch)).toBeNull();
    expect(await consolePage(setup, setup.cliEnv)).not.toContain('data-testid="platform-follow"');
  });

  it('the server, for a sequential batch that closes itself while it runs, stops the Prolific study within a minute', async () => {
    const setup = await prolificSetup({ settings: SEQUENTIAL });
    const study = await published(setup);
    const server = await startServer({ ...setup.cliEnv, SEED_DEMO: 'false', LOG_LEVEL: 'warn' });
    try {
      await rateAll(setup, study.id, 2);
      expect(getBatch(setup.db, setup.seeded.batchId)?.state).toBe('closed');
      const closedAt = Date.now();
      const stopOf = () => listBatchOperations(setup.db, setup.seeded.batchId, 'prolific').find((o) => o.kind === 'stop');
      while (study.status !== 'AWAITING REVIEW' && Date.now() - closedAt < 60_000) await new Promise((resolve) => setTimeout(resolve, 100));
      const elapsed = Date.now() - closedAt;
      expect(study.status).toBe('AWAITING REVIEW');
      expect(elapsed).toBeLessThan(60_000);
      // Prolific moves the study before its answer reaches the server, which then marks the operation confirmed.
      while (stopOf()?.state !== 'confirmed' && Date.now() - closedAt < 70_000) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stopOf()).toMatchObject({ state: 'confirmed', actor: 'server' });
      expect(server.output()).not.toContain(setup.token);
    } finally {
      await stopServer(server.child);
    }
  }, 90_000);
});

describe('the MTurk HITs follow their batch', () => {
  it('followPlatforms, when an MTurk batch is closed, expires its HITs once through the ledger and asks MTurk nothing more', async () => {
    const setup = await mturkSetup();
    expect((await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    const hits = [...setup.fake.hits.values()];
    expect(hits.length).toBeGreaterThan(0);
    const deps = { db: setup.db, config: loadConfig(setup.cliEnv), clock: () => new Date(), actor: 'server' };
    expect(await followPlatforms(deps)).toEqual([]);
    transitionBatch(setup.db, setup.seeded.batchId, 'close', 'admin', new Date());
    expect(await followPlatforms(deps)).toEqual([{ batchId: setup.seeded.batchId, platform: 'mturk', target: 'expired', reached: true, problem: null }]);
    const nowSeconds = Date.now() / 1000 + 1;
    for (const h of hits) expect(h.Expiration).toBeLessThanOrEqual(nowSeconds);
    const expiries = listBatchOperations(setup.db, setup.seeded.batchId, 'mturk').filter((o) => o.kind === 'expire');
    expect(expiries.map((o) => [o.state, o.actor])).toEqual(hits.map(() => ['confirmed', 'server']));
    const asked = setup.fake.requests.length;
    expect(await followPlatforms(deps)).toEqual([]);
    expect(setup.fake.requests.length).toBe(asked);
  });
});
