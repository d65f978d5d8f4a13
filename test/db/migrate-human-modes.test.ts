import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { tempDir } from '../helpers/test-db.js';

// Migration 044 rebuilds `dialogues` (its mode CHECK is in a UNIQUE constraint) with foreign keys off around it, as
// SQLite's procedure for a rebuild asks. The rows that refer to a dialogue must survive it, still bound to it.

const before044 = () => listMigrations().filter((m) => m.version < 44);

function databaseAt043() {
  const db = openDatabase(join(tempDir(), 'at-043.db'));
  migrate(db, before044());
  const now = '2026-12-01T10:00:00.000Z';
  db.prepare("INSERT INTO runs (name, kind, state, created_at) VALUES ('r', 'generation', 'complete', ?)").run(now);
  db.prepare("INSERT INTO characters (id, first_name, created_at) VALUES ('a', 'A', ?), ('b', 'B', ?)").run(now, now);
  db.prepare("INSERT INTO scenarios (id, title, category, context, relationship, goal_1, goal_2, created_at) VALUES ('s', 't', 'mixed', 'c', 'friend', 'g1', 'g2', ?)").run(now);
  db.prepare("INSERT INTO casts (scenario_id, character_1_id, character_2_id) VALUES ('s', 'a', 'b')").run();
  const insertDialogue = db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at, words) VALUES (1, 's', 1, ?, 'm', 'generated', 'complete', ?, 7)");
  insertDialogue.run('SCRIPT', now);
  insertDialogue.run('AGENTS', now);
  db.prepare("INSERT INTO turns (dialogue_id, idx, speaker, action, text) VALUES (1, 0, 1, 'speak', 'hello'), (2, 0, 1, 'speak', 'hi')").run();
  return { db, now };
}

describe('migration 044 (human modes)', () => {
  it('on a database at 043 with dialogues and turns, keeps every row, its references and the run totals, and accepts the new modes', () => {
    const { db, now } = databaseAt043();
    expect(migrate(db)).toContain('044-human-modes');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.prepare('SELECT id, mode, words FROM dialogues ORDER BY id').all()).toEqual([
      { id: 1, mode: 'SCRIPT', words: 7 },
      { id: 2, mode: 'AGENTS', words: 7 },
    ]);
    expect(db.prepare('SELECT dialogue_id, text FROM turns ORDER BY dialogue_id').all()).toEqual([
      { dialogue_id: 1, text: 'hello' },
      { dialogue_id: 2, text: 'hi' },
    ]);
    expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    expect(db.prepare("SELECT kind FROM runs WHERE name = 'r'").pluck().get()).toBe('generation');

    db.prepare("INSERT INTO runs (name, kind, state, created_at) VALUES ('live', 'collection', 'running', ?)").run(now);
    db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at) VALUES (2, 's', 1, 'HUMANS', 'human', 'collected', 'complete', ?)").run(now);
    db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at) VALUES (2, 's', 1, 'HUMAN_AGENT', 'm', 'collected', 'running', ?)").run(now);
    expect(db.prepare("SELECT dialogues, complete, running FROM run_totals WHERE run_id = 2").get()).toEqual({ dialogues: 2, complete: 1, running: 1 });
    expect(() => db.prepare("INSERT INTO dialogues (run_id, scenario_id, cast_id, mode, model, origin, state, created_at) VALUES (2, 's', 1, 'CHAT', 'm', 'collected', 'complete', ?)").run(now)).toThrow(/CHECK constraint failed/);
    expect(() => db.prepare("INSERT INTO runs (name, kind, state, created_at) VALUES ('x', 'other', 'running', ?)").run(now)).toThrow(/CHECK constraint failed/);

    // The rebuilt table is still the parent of turns: deleting a dialogue cascades, a turn of no dialogue is refused.
    db.prepare('DELETE FROM dialogues WHERE id = 1').run();
    expect(db.prepare('SELECT count(*) FROM turns WHERE dialogue_id = 1').pluck().get()).toBe(0);
    expect(() => db.prepare("INSERT INTO turns (dialogue_id, idx, speaker, action, text) VALUES (99, 0, 1, 'speak', 'x')").run()).toThrow(/FOREIGN KEY constraint failed/);
  });

  it('with a dangling reference already in the database, rolls back and leaves the table as it was', () => {
    const { db } = databaseAt043();
    db.pragma('foreign_keys = OFF');
    db.prepare("INSERT INTO turns (dialogue_id, idx, speaker, action, text) VALUES (42, 0, 1, 'speak', 'orphan')").run();
    db.pragma('foreign_keys = ON');
    expect(() => migrate(db)).toThrow(/044-human-modes left 1 reference\(s\) broken \(first: turns → dialogues\)/);
    expect(db.prepare('SELECT count(*) FROM schema_migrations WHERE version = 44').pluck().get()).toBe(0);
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'dialogues'").pluck().get()).not.toContain('HUMANS');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
  });
});
