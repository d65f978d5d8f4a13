import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { Db } from './connection.js';

export class BackupError extends UserFacingError {}

export type BackupReport = { path: string; pages: number; bytes: number };

// SQLite's online backup copies in steps, and a write by another connection between two steps restarts the copy: under
// a server that writes all the time, small steps might never finish. So the whole database is copied in one step,
// inside one read transaction: in WAL mode that reads a consistent snapshot while the server goes on writing.
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the live database to `target` with SQLite's online backup API (https://sqlite.org/backup.html): a consistent
 * snapshot even while the server writes, unlike copying the file (which misses the WAL). The copy is written beside
 * the target and renamed into place only once complete and checked, so `target` is never a half-written file.
 * The copy is switched out of WAL mode: one self-contained file to store or move.
 */
export async function backupDatabase(db: Db, target: string): Promise<BackupReport> {
  const path = resolve(target);
  if (existsSync(path)) throw new BackupError(`${target} already exists; give a new file name (a backup never overwrites a file)`);
  if (!existsSync(dirname(path))) throw new BackupError(`the folder ${dirname(path)} does not exist`);
  if (resolve(db.name) === path) throw new BackupError('the backup must be a different file from the database');
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  try {
    const result = await db.backup(partial, { progress: () => ALL_PAGES });
    const copy = new Database(partial);
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new BackupError(`the copy failed its check (PRAGMA quick_check: ${String(check)}); it was not kept`);
    } finally {
      copy.close();
    }
    renameSync(partial, path);
    return { path, pages: result.totalPages, bytes: statSync(path).size };
  } catch (error) {
    rmSync(partial, { force: true });
    rmSync(`${partial}-wal`, { force: true });
    rmSync(`${partial}-shm`, { force: true });
    if (error instanceof BackupError) throw error;
    throw new BackupError(`the backup to ${target} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
