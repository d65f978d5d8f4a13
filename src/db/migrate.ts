import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserFacingError } from '../errors/user-facing-error.js';
import { type Baseline, isEmptyDatabase, readBaseline } from './baseline.js';
import type { Db } from './connection.js';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

export type Migration = { version: number; name: string; sql: string };

/** The database was migrated by a newer simarena: this binary would misread or damage data it does not know. */
export class DatabaseTooNewError extends UserFacingError {
  constructor(message: string) {
    super(message, 500, 'database_too_new');
  }
}

export function listMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}-[a-z0-9-]+\.sql$/.test(file))
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      name: file.replace(/\.sql$/, ''),
      sql: readFileSync(join(dir, file), 'utf8'),
    }))
    .sort((x, y) => x.version - y.version);
}

/**
 * Applies pending forward-only migrations, each in its own transaction; returns the names applied. A new database
 * starts from the schema baseline (src/db/baseline.ts), which stands for every migration up to its version, and takes
 * the migrations after it; `baseline: null` replays every migration instead. Refuses a database that holds a
 * migration newer than any this binary knows (written by a newer version): downgrades are not supported.
 */
export function migrate(db: Db, migrations = listMigrations(), baseline: Baseline | null = readBaseline()): string[] {
  const fresh = isEmptyDatabase(db);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const rows = db.prepare<[], { version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version').all();
  const newest = Math.max(0, ...migrations.map((m) => m.version));
  const unknown = rows.filter((row) => row.version > newest);
  if (unknown.length > 0)
    throw new DatabaseTooNewError(
      `this database was upgraded by a newer simarena: it has migration ${unknown.map((row) => row.name).join(', ')}, which this version does not know. ` +
        'Run the newer version again, or restore the backup taken before the upgrade (see docs/operator/running-in-public.md, "Upgrades").',
    );
  const applied = new Set(rows.map((row) => row.version));
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (:version, :name, :at)');
  const done: string[] = [];
  const covered = baseline ? migrations.filter((m) => m.version <= baseline.version) : [];
  // Only when the list holds the baseline's own migration: a list from elsewhere (tests, an older tree) replays its own.
  if (fresh && baseline && covered.some((m) => m.version === baseline.version)) {
    db.transaction(() => {
      db.exec(baseline.sql);
      const at = new Date().toISOString();
      for (const m of covered) record.run({ version: m.version, name: m.name, at });
    })();
    for (const m of covered) {
      applied.add(m.version);
      done.push(m.name);
    }
  }
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    withForeignKeysOffIfAsked(db, migration, () =>
      db.transaction(() => {
        db.exec(migration.sql);
        if (needsForeignKeysOff(migration)) refuseBrokenForeignKeys(db, migration);
        record.run({ version: migration.version, name: migration.name, at: new Date().toISOString() });
      })(),
    );
    done.push(migration.name);
  }
  return done;
}

const FOREIGN_KEYS_OFF = /^-- simarena-migrate: foreign-keys-off$/m;

/** A migration that rebuilds a table others refer to says so on a line of its own (see 044-human-modes.sql). */
function needsForeignKeysOff(migration: Migration): boolean {
  return FOREIGN_KEYS_OFF.test(migration.sql);
}

/**
 * Runs `apply` with foreign keys off when the migration asks for it, as SQLite's procedure for a table rebuild needs
 * (https://www.sqlite.org/lang_altertable.html#otheralter): with them on, dropping the old table would cascade its
 * deletes into every table that refers to it. The pragma is a no-op inside a transaction, so it is set around it.
 */
function withForeignKeysOffIfAsked(db: Db, migration: Migration, apply: () => void): void {
  if (!needsForeignKeysOff(migration)) return apply();
  const before = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    apply();
  } finally {
    db.pragma(`foreign_keys = ${before ? 'ON' : 'OFF'}`);
  }
}

/** Step 10 of the procedure: a rebuild that left a dangling reference rolls back instead of committing it. */
function refuseBrokenForeignKeys(db: Db, migration: Migration): void {
  const broken = db.prepare<[], { table: string; parent: string }>('PRAGMA foreign_key_check').all();
  if (broken.length > 0) {
    const first = broken[0] as { table: string; parent: string };
    throw new Error(`migration ${migration.name} left ${broken.length} reference(s) broken (first: ${first.table} → ${first.parent}); nothing was changed`);
  }
}
