import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { createBatch } from '../../src/batches/create-batch.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { launchReady, makeScenario } from '../helpers/factories.js';
import { startServer } from '../helpers/start-server.js';
import { tempDir } from '../helpers/test-db.js';
import { enter, type Participant } from './live-http.js';
import type { ChildProcess } from 'node:child_process';
import { openSse } from '../helpers/sse.js';

// Restart safety (issue 52): a live dialogue resumes from the database after the server is killed (SIGKILL, no
// shutdown) and started again; a turn whose answer was lost is sent again with its key and stored once, and a page
// that reconnects with Last-Event-ID gets what it missed and nothing twice.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

function seed(path: string): string {
  const db = openDatabase(path);
  migrate(db);
  makeScenario(db);
  const now = new Date();
  const created = createBatch(db, launchReady({ name: 'Restart', task: 'roleplay', run: 'restart-live', partner: { waitSeconds: 60, awaySeconds: 30, sameAddress: true }, turns: { max: 8, min: 2, turnSeconds: 60 } }), { actor: 'test', now });
  transitionBatch(db, created.batchId, 'open', 'test', now);
  const publicId = db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string;
  db.close();
  return publicId;
}

async function boot(path: string) {
  const server = await startServer({ DATABASE_PATH: path, SEED_DEMO: 'false', SESSION_SECRET: 'restart-test-session-secret-restart-test-0001', LOG_LEVEL: 'warn' });
  children.push(server.child);
  return server;
}

/** A participant's turn as their page sends it, against whichever server now answers. */
const turnAt = (base: string, publicId: string, p: Participant, key: string, text: string) =>
  fetch(`${base}/r/${publicId}/live/turn`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ rt: p.rt, _csrf: p.csrf, key, action: 'speak', text }).toString(),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));

describe('live dialogues across a SIGKILL', () => {
  it('resume from the database: the lost answer\'s turn is stored once, reconnecting pages get only what they missed, and the dialogue goes on', async () => {
    const path = join(tempDir('simarena-restart-'), 'simarena.db');
    const publicId = seed(path);
    const first = await boot(path);
    const a = await enter(first.baseUrl, publicId);
    const b = await enter(first.baseUrl, publicId);
    const [sa, sb] = [a.events(), b.events()];
    await Promise.all([sa.next((d) => d.type === 'go'), sb.next((d) => d.type === 'go')]);
    const pageA = await a.page();
    const [one, two] = /data-character="1"/.test(pageA) ? [a, b] : [b, a];
    const [s1, s2] = one === a ? [sa, sb] : [sb, sa];
    expect((await turnAt(first.baseUrl, publicId, one, 'key-one-000001', 'First turn.')).body).toMatchObject({ ok: true, idx: 0 });
    await s2.next((d) => d.type === 'turn' && d.idx === 0);
    expect((await turnAt(first.baseUrl, publicId, two, 'key-two-000001', 'Second turn.')).body).toMatchObject({ ok: true, idx: 1 });
    await s1.next((d) => d.type === 'turn' && d.idx === 1);
    // The third turn is stored, and the server dies before its page hears the answer.
    await turnAt(first.baseUrl, publicId, one, 'key-one-000002', 'Third turn.');
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    s1.close();
    s2.close();

    const second = await boot(path);
    // The page sends the turn it heard no answer for again, with the same key: it is the stored one.
    expect(await turnAt(second.baseUrl, publicId, one, 'key-one-000002', 'Third turn.')).toEqual({ status: 200, body: { ok: true, idx: 2, duplicate: true } });
    const back1 = openAgain(second.baseUrl, publicId, one, '2');
    const back2 = openAgain(second.baseUrl, publicId, two, '1');
    await Promise.all([back1.next((d) => d.type === 'state'), back2.next((d) => d.type === 'state')]);
    expect(turnIds(back1)).toEqual([]);
    expect(turnIds(back2)).toEqual(['2']);
    expect((await turnAt(second.baseUrl, publicId, two, 'key-two-000002', 'Fourth turn.')).body).toMatchObject({ ok: true, idx: 3, duplicate: false });
    await back1.next((d) => d.type === 'turn' && d.idx === 3);
    expect(turnIds(back1)).toEqual(['3']);
    back1.close();
    back2.close();

    const db = openDatabase(path);
    expect(db.prepare('SELECT idx, text FROM turns ORDER BY idx').all()).toEqual([
      { idx: 0, text: 'First turn.' },
      { idx: 1, text: 'Second turn.' },
      { idx: 2, text: 'Third turn.' },
      { idx: 3, text: 'Fourth turn.' },
    ]);
    expect(db.prepare("SELECT state FROM live_dialogues").pluck().get()).toBe('active');
    db.close();
  }, 120_000);
});

/** A page's stream opened again after its server went away, resuming after the last turn it showed. */
function openAgain(base: string, publicId: string, p: Participant, lastEventId: string) {
  return openSse(`${base}/r/${publicId}/live/events?rt=${encodeURIComponent(p.rt)}&after=-1`, { lastEventId });
}

const turnIds = (s: { events: { id?: string; data: unknown }[] }) => s.events.filter((e) => (e.data as { type: string }).type === 'turn').map((e) => e.id);
