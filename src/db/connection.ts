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
    const statement = prepareFresh(sql);
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
