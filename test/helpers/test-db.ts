import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';

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

/** An empty SQLite file opened as the server opens one, in a folder of the test's own; closed and removed after the test. */
export function scratchDb(prefix: string, name = 'data.db'): { db: Db; path: string } {
  const path = join(tempDir(prefix), name);
  const db = openDatabase(path);
  cleanups.push(() => {
    if (db.open) db.close();
  });
  return { db, path };
}
