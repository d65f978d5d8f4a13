import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBaseline, schemaStatements } from '../../src/db/baseline.js';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { tempDir } from '../helpers/test-db.js';

// Issue 45: a new database is made from one baseline of the schema; a database at any earlier version upgrades
// through the numbered migrations. Both must end with the same schema, compared as SQLite reports it.

const normalise = (sql: string | null) => (sql ?? '').replace(/\s+/g, ' ').replace(/\s*([(),;])\s*/g, '$1').trim();

type Schema = Record<string, unknown>;

function describeSchema(db: Db): Schema {
  const objects = db
    .prepare<[], { type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY type, name",
    )
    .all();
  const schema: Schema = {};
  for (const o of objects) {
    if (o.type === 'table') {
      schema[`table ${o.name}`] = {
        columns: db.prepare(`SELECT * FROM pragma_table_xinfo(?)`).all(o.name),
        list: db.prepare(`SELECT type, ncol, wr, strict FROM pragma_table_list(?)`).all(o.name),
        foreignKeys: db.prepare(`SELECT * FROM pragma_foreign_key_list(?)`).all(o.name),
        indexes: db
          .prepare<[string], { name: string; unique: number; origin: string; partial: number }>(`SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`)
          .all(o.name)
          .map((index) => ({ ...index, columns: db.prepare(`SELECT * FROM pragma_index_xinfo(?)`).all(index.name) })),
        sql: normalise(o.sql),
      };
    } else schema[`${o.type} ${o.name}`] = { on: o.tbl_name, sql: normalise(o.sql) };
  }
  return schema;
}

function freshDb(name: string): Db {
  return openDatabase(join(tempDir(), name));
}

describe('the schema baseline', () => {
  it('a new database made from the baseline has the schema of one made by every numbered migration', () => {
    const fromBaseline = freshDb('baseline.db');
    const applied = migrate(fromBaseline);
    const replayed = freshDb('replayed.db');
    migrate(replayed, listMigrations(), null);
    expect(applied).toEqual(listMigrations().map((m) => m.name));
    const a = describeSchema(fromBaseline);
    const b = describeSchema(replayed);
    expect(Object.keys(a).length).toBeGreaterThan(40);
    expect(Object.keys(a).filter((k) => k.startsWith('trigger ')).length).toBeGreaterThan(20);
    expect(a).toEqual(b);
    expect(fromBaseline.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual(
      replayed.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all(),
    );
  });

  it('a database at an earlier version upgrades through the numbered migrations to the same schema', () => {
    const baseline = readBaseline();
    const old = freshDb('old.db');
    // Stopped halfway, as a database made by an older simarena is.
    migrate(old, listMigrations().filter((m) => m.version <= 13), null);
    const applied = migrate(old);
    expect(applied[0]).toMatch(/^015-/);
    const fresh = freshDb('fresh.db');
    migrate(fresh);
    expect(describeSchema(old)).toEqual(describeSchema(fresh));
    expect(baseline.version).toBeGreaterThan(13);
  });

  it('defines each trigger once, and is what the numbered migrations make up to its version', () => {
    const { version, sql } = readBaseline();
    const names = [...sql.matchAll(/CREATE TRIGGER (\S+)/g)].map((m) => m[1]);
    expect(new Set(names).size).toBe(names.length);
    const replayed = freshDb('upto.db');
    migrate(replayed, listMigrations().filter((m) => m.version <= version), null);
    const body = sql.replace(/^(--.*\n)+\n/, '');
    expect(body.trim()).toBe(schemaStatements(replayed).map((s) => `${s};`).join('\n\n'));
  });
});
