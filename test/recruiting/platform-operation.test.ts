import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformError, PlatformHttpError } from '../../src/recruiting/platform-error.js';
import { type OperationSpec, reconcileUnconfirmed, runPlatformOperation } from '../../src/recruiting/platform-operation.js';
import {
  coveredParticipants,
  findUnconfirmedOperations,
  listBatchOperations,
  markOperationSent,
  recordOperation,
} from '../../src/recruiting/platform-operations.queries.js';
import { makeBatch } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

// A one-endpoint platform over real HTTP: POST /approve/:id approves a submission once; GET /state/:id tells whether it
// is approved. Its answers are scripted per test (a 500 after doing it, a 429 with Retry-After, a 400).

const TOKEN = 'secret-token-0123456789abcdef';
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

type Script = (req: IncomingMessage, res: ServerResponse, approved: Set<string>) => boolean;

async function fakePlatform(script: Script[] = []) {
  const approved = new Set<string>();
  const calls: string[] = [];
  const server = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const next = req.method === 'POST' ? script.shift() : undefined;
    if (next?.(req, res, approved)) return;
    const id = (req.url ?? '').split('/').at(-1) ?? '';
    if (req.method === 'POST') approved.add(id);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id, approved: approved.has(id) }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, approved, calls };
}

async function request(url: string, method: string): Promise<{ approved: boolean }> {
  const res = await fetch(url, { method, headers: { authorization: `Token ${TOKEN}` } });
  const text = await res.text();
  if (!res.ok) throw new PlatformHttpError('prolific', res.status, `${text} (sent with ${TOKEN})`, res.headers.get('retry-after') ? Number(res.headers.get('retry-after')) : null);
  return JSON.parse(text) as { approved: boolean };
}

function approval(url: string, batchId: number, id: string): OperationSpec<{ approved: boolean }> {
  return {
    operation: { platform: 'prolific', batchId, kind: 'approve', idempotencyKey: `prolific:${batchId}:approve:${id}`, submissionId: id, participantId: `p-${id}`, request: { submission: id, auth: `Token ${TOKEN}` }, actor: 'test' },
    send: () => request(`${url}/approve/${id}`, 'POST'),
    answerOf: (answer) => ({ answer }),
    check: async () => ((await request(`${url}/state/${id}`, 'GET')).approved ? { done: true } : { done: false }),
  };
}

const deps = (db: ReturnType<typeof createTestDb>['db']) => ({ db, clock: () => new Date('2026-11-29T00:00:00Z'), secrets: [TOKEN], retry: { baseDelayMs: 1 } });

describe('platform operations: record, send, mark, reconcile', () => {
  it('runPlatformOperation, when the platform did it but answered 500, reads its state and does not send it again', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform([
      (req, res, approved) => {
        approved.add('S1');
        res.statusCode = 500;
        res.end('{"error":"internal"}');
        return true;
      },
    ]);
    const outcome = await runPlatformOperation(approval(fake.url, batchId, 'S1'), deps(db));
    expect(outcome.result).toBe('reconciled');
    expect(fake.calls.filter((c) => c.startsWith('POST'))).toEqual(['POST /approve/S1']);
    const [op] = listBatchOperations(db, batchId);
    expect(op).toMatchObject({ state: 'confirmed', attempts: 1, kind: 'approve', submission_id: 'S1' });
  });

  it('runPlatformOperation, when the platform answers 500 without doing it, then succeeds, sends it twice and approves once', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform([
      (_req, res) => {
        res.statusCode = 503;
        res.end('{"error":"unavailable"}');
        return true;
      },
    ]);
    const outcome = await runPlatformOperation(approval(fake.url, batchId, 'S2'), deps(db));
    expect(outcome.result).toBe('sent');
    expect(fake.calls).toEqual(['POST /approve/S2', 'GET /state/S2', 'POST /approve/S2']);
    expect(listBatchOperations(db, batchId)[0]).toMatchObject({ state: 'confirmed', attempts: 2 });
  });

  it('runPlatformOperation, when the platform answers 429 with Retry-After, waits that long and sends again without a state read', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform([
      (_req, res) => {
        res.statusCode = 429;
        res.setHeader('retry-after', '1');
        res.end('{"error":"slow down"}');
        return true;
      },
    ]);
    const waits: number[] = [];
    const outcome = await runPlatformOperation(approval(fake.url, batchId, 'S3'), {
      ...deps(db),
      sleep: async (ms) => {
        waits.push(ms);
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    expect(outcome.result).toBe('sent');
    expect(waits).toEqual([1000]);
    expect(fake.calls).toEqual(['POST /approve/S3', 'POST /approve/S3']);
  });

  it('runPlatformOperation, when the platform refuses with a 400, stops with its message and what to do, and stores no token', async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform([
      (_req, res) => {
        res.statusCode = 400;
        res.end('{"error":"submission is not awaiting review"}');
        return true;
      },
    ]);
    const error = await runPlatformOperation(approval(fake.url, batchId, 'S4'), deps(db)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).message).toContain('submission is not awaiting review');
    expect((error as PlatformError).message).toContain('run the command again');
    expect((error as PlatformError).message).not.toContain(TOKEN);
    const [op] = listBatchOperations(db, batchId);
    expect(op).toMatchObject({ state: 'failed' });
    expect(op?.error).toContain('[redacted]');
    expect(op?.request).toContain('[redacted]');
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(path).includes(Buffer.from(TOKEN))).toBe(false);
  });

  it('runPlatformOperation, run again for a confirmed operation, sends nothing', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform();
    await runPlatformOperation(approval(fake.url, batchId, 'S5'), deps(db));
    const again = await runPlatformOperation(approval(fake.url, batchId, 'S5'), deps(db));
    expect(again.result).toBe('already-done');
    expect(fake.calls).toEqual(['POST /approve/S5']);
  });

  it('reconcileUnconfirmed, for operations sent before a crash, confirms those the platform shows done and frees the others', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform();
    fake.approved.add('S6');
    for (const id of ['S6', 'S7']) {
      const { operation } = recordOperation(db, { ...approval(fake.url, batchId, id).operation, request: {} }, new Date());
      markOperationSent(db, operation.id, new Date());
    }
    const result = await reconcileUnconfirmed('prolific', batchId, (op) => approval(fake.url, batchId, op.submission_id ?? '').check(op), deps(db));
    expect(result).toEqual({ confirmed: 1, notDone: 1, held: 0 });
    expect(findUnconfirmedOperations(db, 'prolific', batchId)).toEqual([]);
    expect([...coveredParticipants(db, 'prolific', batchId, 'approve')]).toEqual(['p-S6']);
    expect(fake.calls.some((c) => c.startsWith('POST'))).toBe(false);
  });

  it('runPlatformOperation, when its retry after a lost answer is refused as a duplicate, never sends it again and holds it, covered, until the platform shows it done', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform([
      (req) => {
        req.socket.destroy();
        return true;
      },
      (_req, res) => {
        res.statusCode = 400;
        res.end('{"error":"The idempotency token has already been processed."}');
        return true;
      },
    ]);
    const base = approval(fake.url, batchId, 'S8');
    const spec: OperationSpec<{ approved: boolean }> = {
      ...base,
      send: () =>
        base.send({} as never).catch((e: unknown) => {
          if (e instanceof PlatformHttpError && e.status === 400) throw new PlatformHttpError('mturk', 400, e.platformMessage, null, true);
          if (e instanceof PlatformHttpError) throw e;
          throw new PlatformHttpError('mturk', 0, 'socket hang up');
        }),
    };
    const held = await runPlatformOperation(spec, deps(db));
    expect(held.result).toBe('held');
    expect(fake.calls.filter((c) => c.startsWith('POST'))).toEqual(['POST /approve/S8', 'POST /approve/S8']);
    expect(fake.calls.filter((c) => c.startsWith('GET'))).toHaveLength(1 + 5);
    expect(listBatchOperations(db, batchId)[0]).toMatchObject({ state: 'unknown', attempts: 2 });
    expect([...coveredParticipants(db, 'prolific', batchId, 'approve')]).toEqual(['p-S8']);

    // A later run reads the platform again: still not shown, it stays held and is not sent; shown, it is confirmed.
    expect(await reconcileUnconfirmed('prolific', batchId, base.check, deps(db))).toEqual({ confirmed: 0, notDone: 0, held: 1 });
    expect((await runPlatformOperation(spec, deps(db))).result).toBe('held');
    fake.approved.add('S8');
    expect((await runPlatformOperation(spec, deps(db))).result).toBe('reconciled');
    expect(fake.calls.filter((c) => c.startsWith('POST'))).toHaveLength(2);
    expect(listBatchOperations(db, batchId)[0]?.state).toBe('confirmed');
  });

  it('runPlatformOperation, with checkFirst, for a new operation the platform shows done already, records it confirmed and sends nothing', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const fake = await fakePlatform();
    fake.approved.add('S9');
    const base = approval(fake.url, batchId, 'S9');
    const outcome = await runPlatformOperation({ ...base, checkFirst: base.check }, deps(db));
    expect(outcome.result).toBe('reconciled');
    expect(fake.calls).toEqual(['GET /state/S9']);
    expect(listBatchOperations(db, batchId)[0]).toMatchObject({ state: 'confirmed', attempts: 0 });
  });

  it('the ledger, for a confirmed operation, refuses to make it look undone or to delete it', () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const { operation } = recordOperation(db, { platform: 'mturk', batchId, kind: 'bonus', idempotencyKey: 'k1', participantId: 'W1', amountMinor: 50, currency: 'USD', request: {}, actor: 'test' }, new Date());
    db.prepare("UPDATE platform_operations SET state = 'confirmed', sent_at = 'x', answered_at = 'x' WHERE id = ?").run(operation.id);
    expect(() => db.prepare("UPDATE platform_operations SET state = 'pending' WHERE id = ?").run(operation.id)).toThrow(/final/);
    expect(() => db.prepare('DELETE FROM platform_operations WHERE id = ?').run(operation.id)).toThrow(/ledger/);
    expect(() => recordOperation(db, { platform: 'mturk', batchId, kind: 'bonus', idempotencyKey: 'k2', amountMinor: 50, currency: 'usd', request: {}, actor: 't' }, new Date())).toThrow();
  });
});
