import { join } from 'node:path';
import { type Db, openDatabase } from '../../../src/db/connection.js';
import { migrate } from '../../../src/db/migrate.js';
import { builtInLibraryDir, installLibrary, readLibrary } from '../../../src/scenarios/load-library.js';
import { benchDir } from './bench-dir.js';

export type BenchCast = { scenarioId: string; castId: number };

/**
 * A benchmark's database in a scratch folder of its own (removed at exit), migrated, with the built-in scenario library
 * installed, and the library's casts in id order for its dialogues.
 */
export function libraryDb(prefix: string, now: Date): { db: Db; casts: BenchCast[] } {
  const db = openDatabase(join(benchDir(prefix), 'bench.db'));
  migrate(db);
  installLibrary(db, readLibrary(builtInLibraryDir), 'simarena', now.toISOString());
  const casts = db.prepare<[], BenchCast>('SELECT scenario_id AS scenarioId, id AS castId FROM casts ORDER BY id').all();
  if (casts.length === 0) throw new Error('the built-in library has no casts');
  return { db, casts };
}
