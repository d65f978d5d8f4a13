import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { UserFacingError } from '../errors/user-facing-error.js';
import { freeGate, takeGate } from './write-gate.mjs';

export type Db = Database.Database;

export class DatabaseOpenError extends UserFacingError {
  constructor(message: string) {
    super(message, 500, 'database_unavailable');
  }
}

/** Statements kept per handle; more distinct SQL texts than this (SQL built with variable parts) evicts the oldest. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Makes `db.prepare(sql)` return one statement per SQL text for the life of the handle, so that every `*.queries.ts`
 * stops compiling its SQL again on each call (7% of the server's CPU under rater load before this; issue 12).
 * A cached statement is handed out with its modes reset (no pluck, raw or expand), as a fresh one would be. A statement
 * that is busy (its `.iterate()` is still open, e.g. while a loop over it runs the same SQL again) is not handed out:
 * the caller gets a fresh, uncached statement instead, so re-entrant use behaves as it did without the cache.
 */
export function cacheStatements(db: Db): Db {
  const prepareFresh = db.prepare.bind(db) as (sql: string) => Database.Statement;
  const cache = new Map<string, Database.Statement>();
  const prepareCached = (sql: string): Database.Statement => {
    const hit = cache.get(sql);
    if (hit) {
      if (hit.busy) return gateWrites(db, prepareFresh(sql));
      // Most recently used last: eviction takes the first key.
      cache.delete(sql);
      cache.set(sql, hit);
      if (hit.reader) hit.pluck(false).raw(false).expand(false);
      return hit;
    }
    const statement = gateWrites(db, buildRowsInJs(prepareFresh(sql)));
    cache.set(sql, statement);
    if (cache.size > STATEMENT_CACHE_SIZE) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    return statement;
  };
  db.prepare = prepareCached as Db['prepare'];
  return db;
}

/** A statement that writes takes the handle's write gate (useWriteGate) when run outside a transaction. */
function gateWrites(db: Db, statement: Database.Statement): Database.Statement {
  if (statement.readonly) return statement;
  const { run, get, all } = statement;
  return Object.assign(statement, { run: gatedCall(db, run), get: gatedCall(db, get), all: gatedCall(db, all) });
}

type Row = Record<string, unknown>;
type Mode = 'object' | 'pluck' | 'raw' | 'expand';

/**
 * A reader statement whose rows are made into objects here, by a function compiled once for its columns, instead of
 * by better-sqlite3, which sets each column by name on a new object for every row: interning the names and growing the
 * object's shape one property at a time were about 5% of the server's CPU under rater load (issue 12). The statement
 * reads raw arrays underneath; what its caller sees (pluck, raw, expand, objects) is unchanged, each mode switch
 * behaving as better-sqlite3's (turning one on turns the others off). Statements with a column named `__proto__` are
 * left as they are (an object literal would set the prototype).
 */
function buildRowsInJs(statement: Database.Statement): Database.Statement {
  if (!statement.reader) return statement;
  const native = Object.getPrototypeOf(statement) as Database.Statement;
  const first = rowMaker(statement);
  if (!first) return statement;
  let makeRow = first;
  let mode: Mode = 'object';
  let nativeMode: Exclude<Mode, 'object'> | 'none' = 'none';
  const read = () => {
    const wanted = mode === 'object' ? 'raw' : mode;
    if (wanted !== nativeMode) {
      native[wanted].call(statement, true);
      nativeMode = wanted;
    }
  };
  // A schema change re-prepares the statement inside SQLite: when it adds or drops a column, the maker is made again
  // (the app's SQL names its columns; only a `SELECT *` over a renamed column would keep the old name).
  const toObject = (values: unknown[]): Row => {
    if (values.length !== makeRow.size) makeRow = rowMaker(statement) ?? makeRow;
    return makeRow(values);
  };
  const toggle = (which: Exclude<Mode, 'object'>) =>
    function (this: Database.Statement, on = true) {
      if (on) mode = which;
      else if (mode === which) mode = 'object';
      return this;
    };
  Object.assign(statement, {
    pluck: toggle('pluck'),
    raw: toggle('raw'),
    expand: toggle('expand'),
    get(this: Database.Statement, ...params: unknown[]) {
      read();
      const row = native.get.apply(this, params) as unknown[] | undefined;
      return mode === 'object' && row !== undefined ? toObject(row) : row;
    },
    all(this: Database.Statement, ...params: unknown[]) {
      read();
      const rows = native.all.apply(this, params) as unknown[][];
      return mode === 'object' ? rows.map(toObject) : rows;
    },
    iterate(this: Database.Statement, ...params: unknown[]) {
      read();
      const rows = native.iterate.apply(this, params) as IterableIterator<unknown[]>;
      if (mode !== 'object') return rows;
      const objects: IterableIterator<Row> = {
        next: () => {
          const step = rows.next();
          return step.done ? step : { done: false, value: toObject(step.value) };
        },
        // Leaving a loop early must end the statement (it stays busy otherwise).
        return: (value?: unknown) => {
          rows.return?.(value);
          return { done: true, value };
        },
        [Symbol.iterator]: () => objects,
      };
      return objects;
    },
  });
  return statement;
}

/** A function making the object of one raw row of this statement's columns; null when a column is named `__proto__`. */
function rowMaker(statement: Database.Statement): (((values: unknown[]) => Row) & { size: number }) | null {
  const names = statement.columns().map((column) => column.name);
  if (names.includes('__proto__')) return null;
  // One object literal of fixed keys: V8 gives every row the same shape at once. The source is made only from
  // column names, quoted by JSON.stringify.
  const make = new Function('r', `return { ${names.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')} };`) as (values: unknown[]) => Row;
  return Object.assign(make, { size: names.length });
}

/** Opens (creating if needed) the SQLite file with the pragmas every connection needs; statements are cached per handle. */
export function openDatabase(path: string): Db {
  let db: Db;
  try {
    // One level only: Node's recursive mkdir can spin forever on paths like /proc/x.
    if (path !== ':memory:' && !existsSync(dirname(path))) mkdirSync(dirname(path));
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    // Touch the file so that a path that is not a database fails here, not on first use.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseOpenError(`Cannot open the database at DATABASE_PATH=${path}: ${reason}`);
  }
  return cacheStatements(db);
}

/**
 * The page cache of the server's connections (the request thread's and the answer thread's), in KiB: SQLite's 2 MB
 * doubled, not the 16 MB better-sqlite3 builds it with. The rater path reads and writes a few pages of each index it
 * touches; at a million judgments each connection filled its 16 MB all the same (the request thread's at start, by the
 * quick check). With 4 MB the server's peak RSS under rater load at 1M was 250–254 MB against 268–282 MB (the kernel's
 * VmHWM; read every 100 ms, 261–266 MB against 281–295 MB), at the same CPU per judgment, in alternating runs (issue 12).
 */
export const SERVER_PAGE_CACHE_KIB = 4000;

/** Sets a connection's page cache to `kib` KiB (SQLite's cache_size, negative for KiB). */
export function limitPageCache(db: Db, kib: number): void {
  db.pragma(`cache_size = -${kib}`);
}

/**
 * A transaction function made once per database handle for `body`, which takes the handle and its arguments:
 * better-sqlite3's `db.transaction(fn)` builds four wrapper functions and defines five properties on each at every
 * call (about 13 µs and their garbage), which the rater path did on every answer and lease (issue 12).
 */
export function transactionOf<A extends unknown[], R>(body: (db: Db, ...args: A) => R): (db: Db) => Database.Transaction<(...args: A) => R> {
  const made = new WeakMap<Db, Database.Transaction<(...args: A) => R>>();
  return (db) => {
    let transaction = made.get(db);
    if (!transaction) {
      transaction = db.transaction((...args: A) => body(db, ...args));
      made.set(db, transaction);
    }
    return transaction;
  };
}

type Gate = { acquire: () => void; release: () => void };
const gates = new WeakMap<Db, Gate>();

/** A write gate: one 32-bit cell shared between the threads whose connections it orders (0 free, 1 taken). */
export function createWriteGate(): SharedArrayBuffer {
  return new SharedArrayBuffer(4);
}

/** Frees a gate whose holder can no longer free it (a thread that ended inside a transaction). */
export function freeWriteGate(gate: SharedArrayBuffer): void {
  freeGate(new Int32Array(gate));
}

/**
 * Makes this handle take `gate` around each of its writes: every transaction, and every statement that writes outside
 * one. Two connections of one process writing side by side (the server's and its answer thread's) otherwise meet on
 * SQLite's write lock, and the one that finds it taken sleeps in SQLite's busy handler for 1 ms at least, while the
 * other's transaction takes about a third of that; such a sleep holds the server's whole request thread (issue 12).
 * At the gate the waiting thread wakes as soon as the other lets go. The gate only orders them: SQLite's lock is still
 * what keeps writes apart, so a write made without the gate (`db.exec`, a pragma, another process) is as safe as
 * before and may only sleep. A gate not freed within `timeoutMs` (the busy timeout) is passed by, to SQLite's lock.
 */
export function useWriteGate(db: Db, gate: SharedArrayBuffer, timeoutMs = 5_000): void {
  const cell = new Int32Array(gate);
  let depth = 0;
  let holding = false;
  gates.set(db, {
    acquire() {
      depth += 1;
      if (depth === 1) holding = takeGate(cell, timeoutMs);
    },
    release() {
      depth -= 1;
      if (depth > 0 || !holding) return;
      holding = false;
      freeGate(cell);
    },
  });
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const made = transaction(fn);
    const gated = Object.assign(gatedCall(db, made), {
      deferred: gatedCall(db, made.deferred),
      immediate: gatedCall(db, made.immediate),
      exclusive: gatedCall(db, made.exclusive),
      database: db,
    });
    return Object.assign(gated, { default: gated });
  }) as Db['transaction'];
}

/** `call` with the handle's gate taken (when it has one and is not inside a transaction already). */
function gatedCall<F extends (...args: never[]) => unknown>(db: Db, call: F): F {
  return function (this: unknown, ...args: Parameters<F>) {
    const gate = gates.get(db);
    if (!gate || db.inTransaction) return call.apply(this, args);
    gate.acquire();
    try {
      return call.apply(this, args);
    } finally {
      gate.release();
    }
  } as F;
}
