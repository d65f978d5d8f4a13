import { mkdtempSync, openSync, readSync, closeSync, renameSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBackgroundCheckpoints } from '../../src/db/background-checkpoint.js';
import { type Db, openDatabase } from '../../src/db/connection.js';

// The server's handle stops checkpointing on its own commits; a thread with its own connection copies the log into
// the database file instead. Observed from outside: the file's own header (its page count) and the log's size.

const opened: Db[] = [];
afterEach(() => {
  for (const db of opened.splice(0)) if (db.open) db.close();
});

function fileDb(): { db: Db; path: string } {
  const path = join(mkdtempSync(join(tmpdir(), 'simarena-checkpoint-')), 'data.db');
  const db = openDatabase(path);
  opened.push(db);
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return { db, path };
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

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('background checkpoints', () => {
  it("copy the log into the database file from their own thread while the server's handle no longer checkpoints, and keep the log from growing without end", async () => {
    const { db, path } = fileDb();
    const checkpoints = await startBackgroundCheckpoints(db, { intervalMs: 20 });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const before = pagesInFile(path);
    writeCommits(db);
    const pages = db.pragma('page_count', { simple: true }) as number;
    expect(pages).toBeGreaterThan(before + 1000);
    // Nothing on this thread checkpoints; the file catches up anyway.
    await until(() => pagesInFile(path) === pages);
    // Once the log is copied, the log starts over (its header counts the restarts), though commits keep coming: five
    // more rounds as large as the first, written as a server writes (a few commits, then other work for 2 ms), stay
    // within twice the log the first round left, where a log that never started over would be six times as long.
    const logAfterFirst = statSync(`${path}-wal`).size;
    const restartsBefore = logRestarts(path);
    for (let round = 0; round < 5; round++) {
      for (let burst = 0; burst < 30; burst++) {
        writeCommits(db, 10);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    expect(logRestarts(path)).toBeGreaterThan(restartsBefore);
    expect(statSync(`${path}-wal`).size).toBeLessThan(2 * logAfterFirst);
    await checkpoints.stop();
    // Stopped: the handle checkpoints on its own commits again, as SQLite does by default.
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });

  it('without background checkpoints the same commits leave the file behind (the observation above is the thread’s doing)', () => {
    const { db, path } = fileDb();
    db.pragma('wal_autocheckpoint = 0');
    const before = pagesInFile(path);
    writeCommits(db);
    expect(pagesInFile(path)).toBe(before);
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
