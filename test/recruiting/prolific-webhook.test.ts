// Issue 50, item 11: Prolific's submission.status.change webhook frees the pairs of a participant who returns their
// submission or times out, at once. Deliveries come from the fake Prolific as documented: signed with the workspace
// secret, an X-Event-ID kept across retries, retried when not answered 2xx.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { prolificSignature } from '../../src/recruiting/prolific-webhook-signature.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { cli } from '../helpers/run-cli.js';
import { raterClient } from '../rating/rating-fixtures.js';
import { participantIds, prolificSetup, PUBLIC_URL } from './prolific-helpers.js';

type Setup = Awaited<ReturnType<typeof prolificSetup>>;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** The researcher's subscription on the fake Prolific (as `prolific hooks subscribe` makes it): the workspace secret. */
async function subscribe(setup: Setup): Promise<string> {
  const api = (path: string, body: unknown) =>
    fetch(`${setup.fake.url}${path}`, { method: 'POST', headers: { Authorization: `Token ${setup.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const workspace_id = setup.fake.workspaces[0]?.id;
  const secret = ((await (await api('hooks/secrets/', { workspace_id })).json()) as { value: string }).value;
  const created = await api('hooks/subscriptions/', { workspace_id, event_type: 'submission.status.change', target_url: `${PUBLIC_URL}/hooks/prolific` });
  const { id } = (await created.json()) as { id: string };
  expect((await api(`hooks/subscriptions/${id}/`, { secret: created.headers.get('x-hook-secret') })).status).toBe(200);
  return secret;
}

/** The app over the setup's database, with the workspace secret in its environment, listening for Prolific. */
async function listening(setup: Setup, secret: string): Promise<string> {
  const app = createApp({ db: setup.db, config: loadConfig({ ...setup.cliEnv, PROLIFIC_WEBHOOK_SECRET: secret }), logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET, clock: setup.clock });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A participant sent by Prolific consents and is shown a comparison: they hold a lease and their reserved pairs. */
async function holding(setup: Setup, studyId: string, participantId: string) {
  const { submission, url } = setup.fake.startSubmission(studyId, participantId);
  const page = await raterClient(setup.app).startRating(setup.seeded.publicId, url.slice(url.indexOf('?')));
  expect(page.url).toContain('/c/');
  const raterId = setup.db.prepare('SELECT id FROM raters WHERE participant_id = ?').pluck().get(participantId) as number;
  return { submission, raterId };
}

const holdsOf = (setup: Setup, raterId: number) => ({
  leases: setup.db.prepare("SELECT count(*) FROM assignments WHERE rater_id = ? AND state = 'leased'").pluck().get(raterId),
  reserved: setup.db.prepare('SELECT count(*) FROM pair_reservations WHERE rater_id = ?').pluck().get(raterId),
});

describe('Prolific webhooks', () => {
  it('POST /hooks/prolific, for a signed submission.status.change of a returned participant, frees their pairs at once; a redelivery does nothing more', async () => {
    const setup = await prolificSetup();
    expect((await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    const study = [...setup.fake.studies.values()][0] as { id: string };
    const [leaving, staying] = participantIds(2) as [string, string];
    const a = await holding(setup, study.id, leaving);
    const b = await holding(setup, study.id, staying);
    expect(holdsOf(setup, a.raterId)).toEqual({ leases: 1, reserved: 2 });
    const secret = await subscribe(setup);
    // Prolific first finds the server down, then retries the same event.
    setup.fake.hooks.resolveTarget = () => 'http://127.0.0.1:9/hooks/prolific';
    setup.fake.returnSubmission(a.submission.id);
    expect((await setup.fake.deliverHooks()).map((d) => [d.attempts, d.lastStatus, d.done])).toEqual([[1, 0, false]]);
    expect(holdsOf(setup, a.raterId)).toEqual({ leases: 1, reserved: 2 });
    const base = await listening(setup, secret);
    setup.fake.hooks.resolveTarget = (target) => target.replace(/^https:\/\/[^/]+/, base);
    const [delivery] = await setup.fake.deliverHooks();
    expect(delivery).toMatchObject({ attempts: 2, lastStatus: 200, done: true });
    expect(holdsOf(setup, a.raterId)).toEqual({ leases: 0, reserved: 0 });
    expect(holdsOf(setup, b.raterId)).toEqual({ leases: 1, reserved: 2 });
    const events = () => setup.db.prepare('SELECT event_id, status, rater_id FROM prolific_webhook_events').all();
    expect(events()).toEqual([{ event_id: delivery?.eventId, status: 'RETURNED', rater_id: a.raterId }]);
    // The same event again (Prolific's at-least-once delivery): acknowledged, not acted on twice.
    await setup.fake.redeliverHook(delivery?.eventId ?? '');
    expect(setup.fake.hooks.deliveries[0]).toMatchObject({ attempts: 3, lastStatus: 200 });
    expect(events()).toHaveLength(1);
  });

  it('POST /hooks/prolific, unsigned, signed with another secret, or with its body changed, is refused with 401 and frees nothing', async () => {
    const setup = await prolificSetup();
    expect((await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv)).code).toBe(0);
    const study = [...setup.fake.studies.values()][0] as { id: string };
    const [who] = participantIds(1) as [string];
    const held = await holding(setup, study.id, who);
    const base = await listening(setup, 'the-workspace-secret-0123456789');
    const body = JSON.stringify({ resource_id: held.submission.id, event_type: 'submission.status.change', participant_id: who, status: 'RETURNED' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const post = (headers: Record<string, string>, sent = body) => fetch(`${base}/hooks/prolific`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-event-id': 'evt-1', ...headers }, body: sent });
    const unsigned = await post({});
    const forged = await post({ 'x-prolific-request-timestamp': timestamp, 'x-prolific-request-signature': prolificSignature('another-secret-0123456789', timestamp, Buffer.from(body)) });
    const changed = await post(
      { 'x-prolific-request-timestamp': timestamp, 'x-prolific-request-signature': prolificSignature('the-workspace-secret-0123456789', timestamp, Buffer.from(body)) },
      body.replace('RETURNED', 'TIMED-OUT'),
    );
    for (const res of [unsigned, forged, changed]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'This request is not signed with the workspace secret Prolific signs its webhooks with.' });
    }
    expect(holdsOf(setup, held.raterId)).toEqual({ leases: 1, reserved: 2 });
    expect(setup.db.prepare('SELECT count(*) FROM prolific_webhook_events').pluck().get()).toBe(0);
    // Signed with the secret: taken.
    const signed = await post({ 'x-prolific-request-timestamp': timestamp, 'x-prolific-request-signature': prolificSignature('the-workspace-secret-0123456789', timestamp, Buffer.from(body)) });
    expect(signed.status).toBe(200);
    expect(await signed.json()).toEqual({ outcome: 'released' });
    expect(holdsOf(setup, held.raterId)).toEqual({ leases: 0, reserved: 0 });
  });
});

describe('prolific hooks', () => {
  it('prolific hooks, with --create-secret, creates the workspace secret, subscribes and confirms, each in the ledger, prints the secret once and stores it nowhere; again, it finds the subscription', async () => {
    const setup = await prolificSetup();
    const env = { ...setup.cliEnv, PUBLIC_URL: 'https://simarena.example' };
    const refused = await cli(['prolific', 'hooks', String(setup.seeded.batchId)], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PROLIFIC_WEBHOOK_SECRET is not set');
    expect(setup.fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
    const made = await cli(['prolific', 'hooks', String(setup.seeded.batchId), '--create-secret'], env);
    expect(made.code).toBe(0);
    const secret = [...setup.fake.hooks.secrets.values()][0]?.value ?? '';
    expect(made.stdout).toContain(`The workspace's new webhook secret, shown once and stored nowhere: ${secret}`);
    const [sub] = setup.fake.hooks.subscriptions;
    expect(sub).toMatchObject({ target_url: 'https://simarena.example/hooks/prolific', event_type: 'submission.status.change', confirmed: true, is_enabled: true });
    expect(listBatchOperations(setup.db, setup.seeded.batchId, 'prolific').map((o) => [o.kind, o.state])).toEqual([
      ['hook_secret', 'confirmed'],
      ['hook_subscribe', 'confirmed'],
      ['hook_confirm', 'confirmed'],
    ]);
    setup.db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(setup.dbPath).includes(Buffer.from(secret))).toBe(false);
    const again = await cli(['prolific', 'hooks', String(setup.seeded.batchId)], { ...env, PROLIFIC_WEBHOOK_SECRET: secret });
    expect(again.stdout).toContain(`Already subscribed: Prolific sends submission.status.change to https://simarena.example/hooks/prolific (subscription ${sub?.id}`);
    expect(setup.fake.hooks.subscriptions).toHaveLength(1);
    // Prolific refuses a target that is not public https; simarena says so before asking.
    const local = await cli(['prolific', 'hooks', String(setup.seeded.batchId)], { ...setup.cliEnv, PUBLIC_URL: 'http://simarena.example', PROLIFIC_WEBHOOK_SECRET: secret });
    expect(local.stderr).toContain('Prolific delivers webhooks only to a public https:// address; PUBLIC_URL is http://simarena.example.');
  });
});
