import { openSync, readSync, closeSync, renameSync, statSync, writeSync } from 'node:fs';
import { endianness } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { startBackgroundCheckpoints } from '../../src/db/background-checkpoint.js';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { scratchDb } from '../helpers/test-db.js';

// The server's handle stops checkpointing on its own commits; a thread with its own connection copies the log into
// the database file instead. Observed from outside: the file's own header (its page count) and the log's size.

const opened: Db[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
});

function fileDb(): { db: Db; path: string } {
  // In a folder removed after the test (test/helpers/test-db.ts): a run left one behind per test before.
  const scratch = scratchDb('simarena-checkpoint-');
  scratch.db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return scratch;
}

/** The page count the database file itself records (header bytes 28–31): only a checkpoint moves pages into it. */
function pagesInFile(path: string): number {
  const fd = openSync(path, 'r');
  const header = Buffer.alloc(32);
  readSync(fd, header, 0, 32, 0);
  closeSync(fd);
  return header.readUInt32BE(28);
}

/** The write-ahead log's checkpoint sequence number (header bytes 12–15): SQLite adds one each time the log starts over. */
function logRestarts(path: string): number {
  const fd = openSync(`${path}-wal`, 'r');
  const header = Buffer.alloc(16);
  readSync(fd, header, 0, 16, 0);
  closeSync(fd);
  return header.readUInt32BE(12);
}

/** Many small commits, as raters' answers make them: 300 × 4 pages of new rows. */
function writeCommits(db: Db, commits = 300): void {
  const insert = db.prepare('INSERT INTO notes (body) VALUES (?)');
  for (let i = 0; i < commits; i++) db.transaction(() => insert.run('x'.repeat(16_000)))();
}

/** The log one round of `writeCommits` leaves when nothing checkpoints it, on a database of its own. */
function logOfOneRoundWithoutCheckpoints(): number {
  const { db, path } = fileDb();
  db.pragma('wal_autocheckpoint = 0');
  writeCommits(db);
  return statSync(`${path}-wal`).size;
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Makes every checkpoint of the file fail as in the incident ("database disk image is malformed") until `restore()`,
 * without touching the log or the database file: the wal-index header at the start of the -shm file (two equal copies
 * of 48 bytes in native byte order, checksummed; https://www.sqlite.org/walformat.html) is rewritten, checksum and all,
 * to say twice the real page size, and a checkpoint refuses a log of another page size as corrupt before it copies any
 * page. (A connection in `locking_mode = EXCLUSIVE` cannot do it: it needs an exclusive lock on the database file,
 * which it never gets while the server's handle and the thread hold their shared ones; and `PRAGMA wal_checkpoint`
 * reports a busy log in its result instead of failing.) Nothing may write to the database meanwhile.
 */
function damageLogIndex(path: string): { restore: () => void } {
  const fd = openSync(`${path}-shm`, 'r+');
  const original = Buffer.alloc(96);
  readSync(fd, original, 0, 96, 0);
  const header = Buffer.from(original.subarray(0, 48));
  const le = endianness() === 'LE';
  const u32 = (at: number) => (le ? header.readUInt32LE(at) : header.readUInt32BE(at));
  const setU32 = (value: number, at: number) => (le ? header.writeUInt32LE(value, at) : header.writeUInt32BE(value, at));
  const checksum = () => {
    let s1 = 0;
    let s2 = 0;
    for (let at = 0; at < 40; at += 8) {
      s1 = (s1 + u32(at) + s2) >>> 0;
      s2 = (s2 + u32(at + 4) + s1) >>> 0;
    }
    return [s1, s2];
  };
  // This reading of the format holds for this SQLite: both copies agree, and the checksum is the one computed here.
  expect(original.subarray(48, 96)).toEqual(original.subarray(0, 48));
  expect(checksum()).toEqual([u32(40), u32(44)]);
  // SQLite compares the page size only when the log holds frames.
  expect(u32(16)).toBeGreaterThan(0);
  const pageSize = le ? header.readUInt16LE(14) : header.readUInt16BE(14);
  if (le) header.writeUInt16LE(pageSize * 2, 14);
  else header.writeUInt16BE(pageSize * 2, 14);
  const [s1, s2] = checksum();
  setU32(s1 ?? 0, 40);
  setU32(s2 ?? 0, 44);
  writeSync(fd, Buffer.concat([header, header]), 0, 96, 0);
  return {
    restore: () => {
      writeSync(fd, original, 0, 96, 0);
      closeSync(fd);
    },
  };
}

/** Background checkpoints with what they report, started on a few commits, then made to fail (damageLogIndex). */
async function startThenDamage(db: Db, path: string) {
  const problems: string[] = [];
  const recoveries: number[] = [];
  const checkpoints = await startBackgroundCheckpoints(db, { intervalMs: 10, onError: (m) => problems.push(m), onRecovered: (n) => recoveries.push(n) });
  writeCommits(db, 5);
  return { checkpoints, problems, recoveries, damage: damageLogIndex(path) };
}

describe('background checkpoints', () => {
  it("copy the log into the database file from their own thread while the server's handle no longer checkpoints, and keep the log from growing without end", async () => {
    const { db, path } = fileDb();
    const checkpoints = await startBackgroundCheckpoints(db, { intervalMs: 20, restartIntervalMs: 20 });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = pagesInFile(path);
    writeCommits(db);
    const pages = db.pragma('page_count', { simple: true }) as number;
    expect(pages).toBeGreaterThan(before + 1000);
    // Nothing on this thread checkpoints; the file catches up anyway.
    await until(() => pagesInFile(path) === pages);
    // Once the log is copied, the log starts over (its header counts the restarts) and is written again from its start:
    // five more rounds as large as the first, each written as a server writes (a few commits, then other work for 2 ms),
    // leave a log shorter than two rounds, where a log that never started over would hold six. The next round begins once
    // the file has caught up: how far the thread falls behind within a round is the machine's scheduling (a bound on the
    // size reached meanwhile failed on a loaded CI machine), whether the log is used again is the thread's doing.
    const oneRound = logOfOneRoundWithoutCheckpoints();
    const restartsBefore = logRestarts(path);
    for (let round = 0; round < 5; round++) {
      for (let burst = 0; burst < 30; burst++) {
        writeCommits(db, 10);
        await new Promise((r) => setTimeout(r, 2));
      }
      const written = db.pragma('page_count', { simple: true }) as number;
      await until(() => pagesInFile(path) === written, 30_000);
    }
    expect(logRestarts(path)).toBeGreaterThan(restartsBefore);
    expect(statSync(`${path}-wal`).size).toBeLessThan(2 * oneRound);
    await checkpoints.stop();
    // Stopped: the handle checkpoints on its own commits again, as SQLite does by default.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('cut a log that a long reader let grow back a step at a time, one step per commit after it starts over, down to the limit', async () => {
    const { db, path } = fileDb();
    const mb = 1024 * 1024;
    const checkpoints = await startBackgroundCheckpoints(db, { intervalMs: 10, restartIntervalMs: 10, logSizeLimitBytes: mb, logCutStepBytes: mb / 2 });
    // A reader holds its snapshot (as an analysis does) while commits come: the log cannot start over and grows.
    const reader = openDatabase(path);
    opened.push(reader);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM notes').get();
    writeCommits(db, 400);
    reader.exec('COMMIT');
    const grown = statSync(`${path}-wal`).size;
    expect(grown).toBeGreaterThan(6 * mb);
    // Commits go on as raters' answers do; each time the thread has copied the log it starts over, and the commit after
    // that cuts the file. Seen after every commit, the log never loses more than one step (and the commit's own pages) at once.
    const sizes = [grown];
    await until(() => {
      writeCommits(db, 1);
      sizes.push(statSync(`${path}-wal`).size);
      return (sizes.at(-1) as number) <= mb + 64 * 1024;
    }, 20_000);
    const cuts = sizes.slice(1).map((size, i) => (sizes[i] as number) - size);
    expect(Math.max(...cuts)).toBeLessThanOrEqual(mb / 2 + 64 * 1024);
    expect(cuts.filter((cut) => cut > 0).length).toBeGreaterThanOrEqual(10);
    await checkpoints.stop();
  });

  it('take the write lock to let the log start over at most once per restart interval, however often they copy it', async () => {
    // The log also starts over by itself, at no one's cost, whenever a copy (PASSIVE) caught up before the next commit:
    // on a fast machine that is most rounds of these commits. What the interval bounds is the thread's RESTARTs, which
    // hold the write lock while they copy; the thread reports each one that got the lock.
    /** RESTARTs and log restarts while commits come as a server makes them for `ms`, and how long that took. */
    const restartsUnder = async (restartIntervalMs: number, ms: number) => {
      const { db, path } = fileDb();
      const checkpoints = await startBackgroundCheckpoints(db, { intervalMs: 10, restartIntervalMs });
      writeCommits(db, 5);
      const before = logRestarts(path);
      const restartsBefore = checkpoints.restarts();
      const started = performance.now();
      while (performance.now() - started < ms) {
        writeCommits(db, 5);
        await new Promise((r) => setTimeout(r, 2));
      }
      const elapsed = performance.now() - started;
      const logStartedOver = logRestarts(path) - before;
      // Reports still on their way arrive before the thread ends.
      await checkpoints.stop();
      return { restarts: checkpoints.restarts() - restartsBefore, logStartedOver, elapsed };
    };
    // Copied every 10 ms and let start over as often: many restarts.
    const often = await restartsUnder(10, 1500);
    expect(often.restarts).toBeGreaterThan(20);
    expect(often.logStartedOver).toBeGreaterThan(20);
    // Copied as often, let start over at most every 400 ms: a few, never more than the interval allows.
    const limited = await restartsUnder(400, 1500);
    expect(limited.restarts).toBeGreaterThanOrEqual(1);
    // (One more: a RESTART allowed just before the count began may be reported after it.)
    expect(limited.restarts).toBeLessThanOrEqual(Math.floor(limited.elapsed / 400) + 2);
    // The log itself keeps starting over, however seldom the thread takes the lock.
    expect(limited.logStartedOver).toBeGreaterThanOrEqual(1);
  });

  it('without background checkpoints the same commits leave the file behind (the observation above is the thread’s doing)', () => {
    const { db, path } = fileDb();
    db.pragma('wal_autocheckpoint = 0');
    const before = pagesInFile(path);
    writeCommits(db);
    expect(pagesInFile(path)).toBe(before);
  });

  it("startBackgroundCheckpoints, when the thread's checkpoints fail after it started and later succeed again, hands them to the server's handle with one warning meanwhile and takes them back with one recovery report", async () => {
    const { db, path } = fileDb();
    const { checkpoints, problems, recoveries, damage } = await startThenDamage(db, path);
    // Many attempts, all failing: one warning, with the reason; the handle checkpoints on its own commits meanwhile.
    await until(() => checkpoints.failedAttempts() >= 20);
    expect(problems).toEqual([expect.stringMatching(/database disk image is malformed/)]);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(recoveries).toEqual([]);
    damage.restore();
    await until(() => recoveries.length > 0);
    expect(recoveries).toEqual([expect.any(Number)]);
    expect(recoveries[0]).toBeGreaterThanOrEqual(20);
    expect(checkpoints.failedAttempts()).toBe(0);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // The thread checkpoints again (the handle does not): the file catches up with new commits; nothing more reported.
    writeCommits(db);
    const pages = db.pragma('page_count', { simple: true }) as number;
    await until(() => pagesInFile(path) === pages);
    expect(problems).toHaveLength(1);
    expect(recoveries).toHaveLength(1);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    await checkpoints.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it("stop(), when called during a run of failed checkpoints (and twice), ends the thread and leaves the server's handle checkpointing on its own commits, with no recovery reported", async () => {
    const { db, path } = fileDb();
    const { checkpoints, problems, recoveries, damage } = await startThenDamage(db, path);
    await until(() => checkpoints.failedAttempts() >= 3);
    await Promise.all([checkpoints.stop(), checkpoints.stop()]);
    damage.restore();
    await checkpoints.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect(problems).toHaveLength(1);
    expect(recoveries).toEqual([]);
    // With the thread ended, only the handle's own checkpoints (a commit past 1,000 pages of log) can move the file on.
    const before = pagesInFile(path);
    writeCommits(db);
    expect(pagesInFile(path)).toBeGreaterThan(before);
  });

  it('a thread that cannot open the database leaves the handle checkpointing on its own commits, with the reason', async () => {
    const { db, path } = fileDb();
    // The handle keeps its open file; the path the thread would open is gone.
    renameSync(path, `${path}.moved`);
    const problems: string[] = [];
    await expect(startBackgroundCheckpoints(db, { intervalMs: 20, onError: (m) => problems.push(m) })).rejects.toThrow(/cannot open .*data\.db: .*(unable to open|SQLITE_CANTOPEN)/i);
    expect(problems).toEqual([expect.stringMatching(/cannot open/)]);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });
});
