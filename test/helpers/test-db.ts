import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.();
});

/** A fresh folder for one test, removed after it. */
export function tempDir(prefix = 'simarena-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A real SQLite file of the test's own, migrated, closed after the test. */
export function createTestDb(): { db: Db; path: string } {
  const scratch = scratchDb('simarena-test-', 'simarena.db');
  migrate(scratch.db);
  return scratch;
}

/**
 * A test database as an older simarena left it: migrated up to (not including) migration `version`, given rows by
 * `before` (which that version would have refused, say), then migrated the rest of the way as an upgrade does.
 */
export function createTestDbUpgradedAt(version: number, before: (db: Db) => void): { db: Db; path: string } {
  const scratch = scratchDb('simarena-test-', 'simarena.db');
  migrate(scratch.db, listMigrations().filter((m) => m.version < version));
  before(scratch.db);
  migrate(scratch.db);
  return scratch;
}

/** An empty SQLite file opened as the server opens one, in a folder of the test's own; closed and removed after the test. */
export function scratchDb(prefix: string, name = 'data.db'): { db: Db; path: string } {
  const path = join(tempDir(prefix), name);
  const db = openDatabase(path);
  cleanups.push(() => {
    if (db.open) db.close();
  });
  return { db, path };
}
