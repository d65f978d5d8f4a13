import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './connection.js';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

export type Migration = { version: number; name: string; sql: string };

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

/** Applies pending forward-only migrations, each in its own transaction; returns the names applied. */
export function migrate(db: Db, migrations = listMigrations()): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .pluck()
      .all()
      .map((v) => Number(v)),
  );
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (:version, :name, :at)');
  const done: string[] = [];
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run({ version: migration.version, name: migration.name, at: new Date().toISOString() });
    })();
    done.push(migration.name);
  }
  return done;
}
