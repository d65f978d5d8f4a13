import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { createWriteGate, type Db, freeWriteGate, useWriteGate } from '../../src/db/connection.js';
import { scratchDb } from '../helpers/test-db.js';

// Two connections of one process that write side by side take one gate around their writes, so that the one that
// meets the other's transaction waits for it at the gate instead of in SQLite's busy handler (issue 12). Both
// connections here have no busy timeout: a write that met the other's lock would fail at once with SQLITE_BUSY.

const threads: Worker[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.terminate()));
});

function fileDb(): { db: Db; path: string } {
  const scratch = scratchDb('simarena-gate-');
  scratch.db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, who TEXT NOT NULL)');
  scratch.db.pragma('busy_timeout = 0');
  return scratch;
}

/** A thread whose connection holds a write transaction for `holdMs` when asked; resolves once it holds it. */
async function holder(path: string, gate: SharedArrayBuffer | null) {
  const thread = new Worker(new URL('./write-gate-holder.mjs', import.meta.url), { workerData: { path, gate }, execArgv: [] });
  threads.push(thread);
  const next = (what: string) => new Promise<void>((resolve) => thread.on('message', (m) => m === what && resolve()));
  await next('ready');
  return {
    hold: async (holdMs: number) => {
      const holding = next('holding');
      thread.postMessage(holdMs);
      await holding;
      return { done: next('done') };
    },
  };
}

const writers = (db: Db) => db.prepare('SELECT who FROM notes ORDER BY id').pluck().all();

describe('the write gate', () => {
  it('a write that meets the other thread’s transaction waits for it at the gate, then goes in after it', async () => {
    const { db, path } = fileDb();
    const gate = createWriteGate();
    useWriteGate(db, gate);
    const other = await holder(path, gate);
    const { done } = await other.hold(150);
    db.prepare('INSERT INTO notes (who) VALUES (?)').run('here');
    db.transaction(() => db.prepare('INSERT INTO notes (who) VALUES (?)').run('here, in a transaction')).immediate();
    await done;
    expect(writers(db)).toEqual(['thread', 'here', 'here, in a transaction']);
  });

  it('without the gate the same write meets SQLite’s lock (what the gate spares)', async () => {
    const { db, path } = fileDb();
    const other = await holder(path, null);
    const { done } = await other.hold(150);
    expect(() => db.prepare('INSERT INTO notes (who) VALUES (?)').run('here')).toThrow(/locked|busy/i);
    await done;
    expect(writers(db)).toEqual(['thread']);
  });

  it('nested transactions and writes inside a transaction take the gate once, and free it at the end', async () => {
    const { db } = fileDb();
    const gate = createWriteGate();
    useWriteGate(db, gate);
    const cell = new Int32Array(gate);
    const seen: number[] = [];
    const inner = db.transaction(() => {
      db.prepare('INSERT INTO notes (who) VALUES (?)').run('inner');
      seen.push(Atomics.load(cell, 0));
    });
    db.transaction(() => {
      seen.push(Atomics.load(cell, 0));
      inner();
      seen.push(Atomics.load(cell, 0));
    }).immediate();
    seen.push(Atomics.load(cell, 0));
    expect(writers(db)).toEqual(['inner']);
    expect(seen).toEqual([1, 1, 1, 0]);
  });

  it('a gate its holder never freed is passed by after the timeout, to SQLite’s lock; freeWriteGate frees it', () => {
    const { db } = fileDb();
    const gate = createWriteGate();
    useWriteGate(db, gate, 50);
    const cell = new Int32Array(gate);
    Atomics.store(cell, 0, 1);
    db.prepare('INSERT INTO notes (who) VALUES (?)').run('after the timeout');
    expect(writers(db)).toEqual(['after the timeout']);
    expect(Atomics.load(cell, 0)).toBe(1);
    freeWriteGate(gate);
    expect(Atomics.load(cell, 0)).toBe(0);
    db.prepare('INSERT INTO notes (who) VALUES (?)').run('through the gate');
    expect(Atomics.load(cell, 0)).toBe(0);
    expect(writers(db)).toEqual(['after the timeout', 'through the gate']);
  });
});
