import { type ChildProcess, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { LOCK_STALE_MS, withPlatformLock } from '../../src/recruiting/platform-lock.js';
import { makeBatch } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

// The platform lock against a real second process (platform-lock-holder.mjs) holding it on its own connection: alive
// and beating, killed, or stopped (SIGSTOP: alive, its heartbeat silent).

const root = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** A process holding the batch's MTurk lock, beating every `heartbeatMs`; `ask` sends it a line and awaits its answer. */
async function holder(path: string, batchId: number, heartbeatMs = 200) {
  const child = spawn(process.execPath, ['test/recruiting/platform-lock-holder.mjs', path, String(batchId), String(heartbeatMs)], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines: string[] = [];
  let waiting: ((line: string) => void) | null = null;
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (waiting) waiting(line);
      else lines.push(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve) => (lines.length > 0 ? resolve(lines.shift() as string) : (waiting = (l) => ((waiting = null), resolve(l)))));
  expect(await nextLine()).toBe('held');
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    ask: (line: string) => {
      child.stdin?.write(`${line}\n`);
      return nextLine();
    },
    release: () => child.stdin?.write('release\n'),
  };
}

const lockRow = (db: Db) => db.prepare<[], { holder: string; pid: number; acquired_at: string; heartbeat_at: string | null }>('SELECT holder, pid, acquired_at, heartbeat_at FROM platform_locks').get();
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const attempt = (db: Db, batchId: number) => {
  let ran = false;
  const result = withPlatformLock(db, 'mturk', batchId, 'settle', () => new Date(), async () => {
    ran = true;
  }).then(
    () => 'taken',
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  return result.then((r) => ({ result: r, ran }));
};

describe('the platform lock', () => {
  it('withPlatformLock, while a live process has held the lock for over an hour with a fresh heartbeat, refuses and runs nothing', async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db);
    const other = await holder(path, batchId);
    db.prepare('UPDATE platform_locks SET acquired_at = ?').run(ago(2 * 3600_000));
    const tried = await attempt(db, batchId);
    expect(tried.ran).toBe(false);
    expect(tried.result).toContain(`Another settle of batch ${batchId} is sending to MTurk`);
    expect(await other.ask('check')).toBe('still held');
    other.release();
    expect(await other.exited).toBe(0);
    expect(lockRow(db)).toBeUndefined();
  });

  it('withPlatformLock, while its holder works, refreshes the heartbeat, so a lock whose beat was an hour old is fresh again and refused', async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db);
    await holder(path, batchId);
    const old = ago(3600_000);
    db.prepare('UPDATE platform_locks SET acquired_at = :old, heartbeat_at = :old').run({ old });
    for (let i = 0; i < 50 && lockRow(db)?.heartbeat_at === old; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(Date.now() - Date.parse(lockRow(db)?.heartbeat_at ?? '')).toBeLessThan(LOCK_STALE_MS);
    expect((await attempt(db, batchId)).ran).toBe(false);
  });

  it('withPlatformLock, when the holder was killed, takes the lock over at once', async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db);
    const other = await holder(path, batchId);
    other.child.kill('SIGKILL');
    await other.exited;
    expect(lockRow(db)?.pid).toBe(other.child.pid);
    expect(await attempt(db, batchId)).toEqual({ result: 'taken', ran: true });
    expect(lockRow(db)).toBeUndefined();
  });

  it('withPlatformLock, when the holder is alive but its heartbeat stopped, takes the lock over, and the holder, resumed, finds it lost before sending anything', async () => {
    const { db, path } = createTestDb();
    const { batchId } = makeBatch(db);
    const other = await holder(path, batchId, 60_000);
    other.child.kill('SIGSTOP');
    db.prepare('UPDATE platform_locks SET heartbeat_at = ?').run(ago(LOCK_STALE_MS + 5_000));
    let answer = '';
    await withPlatformLock(db, 'mturk', batchId, 'settle', () => new Date(), async () => {
      other.child.kill('SIGCONT');
      answer = await other.ask('check');
    });
    expect(answer).toBe('lost');
  });

  it('withPlatformLock, for a lock of another host, refuses it while its heartbeat is fresh and takes it over once it stopped', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    const insert = (beat: string) =>
      db.prepare(
        `INSERT OR REPLACE INTO platform_locks (batch_id, platform, holder, host, pid, what, acquired_at, heartbeat_at)
         VALUES (:batchId, 'mturk', 'elsewhere:42:abc', 'elsewhere.example', 42, 'settle', :acquired, :beat)`,
      ).run({ batchId, acquired: ago(3 * 3600_000), beat });
    insert(ago(1_000));
    expect((await attempt(db, batchId)).ran).toBe(false);
    insert(ago(LOCK_STALE_MS + 1_000));
    expect(await attempt(db, batchId)).toEqual({ result: 'taken', ran: true });
  });

  it('withPlatformLock, in one process, refuses a second command while the first works, and takes over a lock an earlier process with this pid left', async () => {
    const { db } = createTestDb();
    const { batchId } = makeBatch(db);
    let second = { result: '', ran: false };
    await withPlatformLock(db, 'mturk', batchId, 'settle', () => new Date(), async () => {
      second = await attempt(db, batchId);
    });
    expect(second.ran).toBe(false);
    db.prepare(
      `INSERT INTO platform_locks (batch_id, platform, holder, host, pid, what, acquired_at, heartbeat_at)
       VALUES (:batchId, 'mturk', 'earlier', :host, :pid, 'settle', :now, :now)`,
    ).run({ batchId, host: hostname(), pid: process.pid, now: new Date().toISOString() });
    expect(await attempt(db, batchId)).toEqual({ result: 'taken', ran: true });
  });
});
