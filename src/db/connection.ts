import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { UserFacingError } from '../errors/user-facing-error.js';

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
      if (hit.busy) return prepareFresh(sql);
      // Most recently used last: eviction takes the first key.
      cache.delete(sql);
      cache.set(sql, hit);
      if (hit.reader) hit.pluck(false).raw(false).expand(false);
      return hit;
    }
    const statement = buildRowsInJs(prepareFresh(sql));
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
