import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

describe('migrate', () => {
  it('on an empty database, creates every table, records each migration and turns on WAL and foreign keys', () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'fresh.db'));
    const applied = migrate(db);
    expect(applied).toEqual(listMigrations().map((m) => m.name));
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    for (const table of ['scenarios', 'characters', 'casts', 'runs', 'dialogues', 'turns', 'llm_calls', 'batches', 'pairs', 'raters', 'assignments', 'judgments', 'users', 'api_tokens', 'sessions', 'audit_log']) {
      expect(tables).toContain(table);
    }
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.prepare('SELECT count(*) FROM schema_migrations').pluck().get()).toBe(applied.length);
    db.close();
  });

  it('on an existing database, applies only the new migrations and keeps the data', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('k', 'kept')").run();
    expect(migrate(db)).toEqual([]);
    const dir = tempDir();
    for (const m of listMigrations()) writeFileSync(join(dir, `${m.name}.sql`), m.sql);
    writeFileSync(join(dir, '999-add-note.sql'), 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;');
    expect(migrate(db, listMigrations(dir))).toEqual(['999-add-note']);
    expect(db.prepare("SELECT value FROM settings WHERE key = 'k'").pluck().get()).toBe('kept');
    expect(db.prepare('SELECT max(version) FROM schema_migrations').pluck().get()).toBe(999);
  });

  it('with a failing migration, rolls it back whole and records nothing', () => {
    const { db } = createTestDb();
    const dir = tempDir();
    writeFileSync(join(dir, '500-broken.sql'), 'CREATE TABLE half (id INTEGER PRIMARY KEY) STRICT; INSERT INTO nowhere VALUES (1);');
    expect(() => migrate(db, listMigrations(dir))).toThrow(/no such table: nowhere/);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half'").pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM schema_migrations WHERE version = 500').pluck().get()).toBe(0);
  });

  it('enforces the invariants the schema promises: one judgment per assignment, valid modes', () => {
    const { db } = createTestDb();
    const now = new Date().toISOString();
    db.prepare("INSERT INTO runs (name, kind, state, created_at) VALUES ('r', 'demo', 'complete', ?)").run(now);
    db.prepare("INSERT INTO characters (id, first_name, created_at) VALUES ('a', 'A', ?), ('b', 'B', ?)").run(now, now);
    db.prepare("INSERT INTO scenarios (id, title, category, context, relationship, goal_1, goal_2, created_at) VALUES ('s', 't', 'mixed', 'c', 'friend', 'g1', 'g2', ?)").run(now);
    db.prepare("INSERT INTO casts (scenario_id, character_1_id, character_2_id) VALUES ('s', 'a', 'b')").run();
    expect(() =>
      db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at) VALUES (1, 's', 1, 'CHAT', 'm', 'demo', 'complete', ?)").run(now),
    ).toThrow(/CHECK constraint failed/);
    expect(() =>
      db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at) VALUES (1, 'missing', 1, 'SCRIPT', 'm', 'demo', 'complete', ?)").run(now),
    ).toThrow(/FOREIGN KEY constraint failed/);
  });
});
