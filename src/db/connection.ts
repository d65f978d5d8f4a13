import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export class DatabaseOpenError extends Error {}

/** Opens (creating if needed) the SQLite file with the pragmas every connection needs. */
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
  return db;
}
