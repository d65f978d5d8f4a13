import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Db } from './connection.js';

// A new database is created from one baseline of the schema (every table, index and trigger as it stands after the
// numbered migrations up to the baseline's version, each defined once) instead of replaying 30 migrations whose table
// rebuilds restate earlier triggers. A database at any earlier version still upgrades through the numbered migrations;
// migrations after the baseline apply to both. scripts/db/write-baseline.ts writes the file from the migrations, and
// test/db/baseline.test.ts checks that both ways give the same schema.

const baselineFile = fileURLToPath(new URL('./baseline.sql', import.meta.url));

export type Baseline = { version: number; sql: string };

/** The version a baseline file stands for, from its first line: `-- simarena schema baseline: migration NNN`. */
export function parseBaseline(sql: string): Baseline {
  const match = /^-- simarena schema baseline: migration (\d{3})\b/.exec(sql);
  if (!match) throw new Error('the schema baseline does not start with "-- simarena schema baseline: migration NNN"');
  return { version: Number(match[1]), sql };
}

export function readBaseline(file = baselineFile): Baseline {
  return parseBaseline(readFileSync(file, 'utf8'));
}

/** True for a database with no table yet (a new file): the only kind a baseline is applied to. */
export function isEmptyDatabase(db: Db): boolean {
  return db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().get() === 0;
}

/** Every schema object the migrations made, as SQLite keeps it: tables, views, indexes, then triggers, each in creation order. */
export function schemaStatements(db: Db): string[] {
  return db
    .prepare<[], { sql: string }>(
      `SELECT sql FROM sqlite_master
       WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'
       ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 WHEN 'index' THEN 2 ELSE 3 END, rowid`,
    )
    .all()
    .map((row) => row.sql);
}
