import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cacheStatements } from '../../src/db/connection.js';
import { createTestDb } from '../helpers/test-db.js';

describe('statement cache of a database handle', () => {
  it('db.prepare, when called twice with the same SQL, returns the same statement and its results stay right', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('a', '1'), ('b', '2')").run();
    const sql = 'SELECT value FROM settings WHERE key = :key';
    const first = db.prepare(sql);
    expect(db.prepare(sql)).toBe(first);
    expect(db.prepare<{ key: string }, { value: string }>(sql).get({ key: 'a' })).toEqual({ value: '1' });
    expect(db.prepare<{ key: string }, { value: string }>(sql).get({ key: 'b' })).toEqual({ value: '2' });
  });

  it('db.prepare, when an earlier caller turned on pluck or raw, hands the statement out with its modes reset', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('a', '1')").run();
    const sql = 'SELECT key, value FROM settings';
    expect(db.prepare(sql).pluck().get()).toBe('a');
    expect(db.prepare(sql).raw().get()).toEqual(['a', '1']);
    expect(db.prepare(sql).get()).toEqual({ key: 'a', value: '1' });
  });

  it('db.prepare, when the same SQL is run again while iterating over it, gives a fresh statement instead of "busy"', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('a', 'b'), ('b', 'c'), ('c', 'end')").run();
    const sql = 'SELECT key, value FROM settings WHERE key = :key';
    const seen: string[] = [];
    // Follow the chain a → b → c, each step iterating the same SQL while the outer iteration is still open.
    const walk = (key: string): void => {
      for (const row of db.prepare<{ key: string }, { key: string; value: string }>(sql).iterate({ key })) {
        seen.push(row.key);
        walk(row.value);
      }
    };
    walk('a');
    expect(seen).toEqual(['a', 'b', 'c']);
    // Once the iterations are over, the cached statement serves again.
    expect(db.prepare(sql).get({ key: 'c' })).toEqual({ key: 'c', value: 'end' });
  });

  it('db.prepare, when a statement fails to compile, throws and a later valid SQL still works', () => {
    const { db } = createTestDb();
    expect(() => db.prepare('SELECT nope FROM no_such_table')).toThrow(/no such table/);
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
  });

  it('a cached statement, in every mode and way of reading, returns what better-sqlite3 itself returns', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('a', '1'), ('b', '2'), ('c', '3')").run();
    const plain = new Database(db.name, { readonly: true });
    const sqls = ['SELECT key, value, length(value) AS n FROM settings ORDER BY key', "SELECT key AS same, value AS same FROM settings WHERE key = 'b'", 'SELECT key FROM settings WHERE 0'];
    const modes = [(s: Database.Statement) => s, (s: Database.Statement) => s.pluck(), (s: Database.Statement) => s.raw(), (s: Database.Statement) => s.expand()];
    for (const sql of sqls) {
      for (const mode of modes) {
        expect(mode(db.prepare(sql)).get()).toEqual(mode(plain.prepare(sql)).get());
        expect(mode(db.prepare(sql)).all()).toEqual(mode(plain.prepare(sql)).all());
        expect([...mode(db.prepare(sql)).iterate()]).toEqual([...mode(plain.prepare(sql)).iterate()]);
      }
    }
    // Rows are plain objects; a later column of the same name wins, as in better-sqlite3.
    expect(db.prepare("SELECT key AS same, value AS same FROM settings WHERE key = 'b'").get()).toEqual({ same: '2' });
    // Turning a mode on turns the others off; turning one off that is not on changes nothing.
    const sql = sqls[0] as string;
    expect(db.prepare(sql).raw().pluck().get()).toBe('a');
    expect(db.prepare(sql).pluck().raw().get()).toEqual(['a', '1', 1]);
    expect(db.prepare(sql).pluck().raw(false).get()).toBe('a');
    expect(db.prepare(sql).pluck().pluck(false).get()).toEqual({ key: 'a', value: '1', n: 1 });
    plain.close();
  });

  it('a cached statement, when a loop over its rows ends early, is free again for the next caller', () => {
    const { db } = createTestDb();
    db.prepare("INSERT INTO settings (key, value) VALUES ('a', '1'), ('b', '2')").run();
    const sql = 'SELECT key FROM settings ORDER BY key';
    const statement = db.prepare(sql);
    for (const row of statement.iterate()) {
      expect(row).toEqual({ key: 'a' });
      break;
    }
    expect(statement.busy).toBe(false);
    expect(db.prepare(sql)).toBe(statement);
  });

  it('a cached statement, when the table it reads gains a column, returns the new column too', () => {
    const db = cacheStatements(new Database(':memory:'));
    db.exec("CREATE TABLE t (a TEXT); INSERT INTO t VALUES ('x')");
    const sql = 'SELECT * FROM t';
    expect(db.prepare(sql).get()).toEqual({ a: 'x' });
    db.exec("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'y'");
    expect(db.prepare(sql).get()).toEqual({ a: 'x', b: 'y' });
    db.close();
  });

  it('a cached statement, when a column is named __proto__, returns what better-sqlite3 returns and never sets a prototype', () => {
    const { db } = createTestDb();
    const plain = new Database(db.name, { readonly: true });
    const sql = "SELECT json_object('polluted', 1) AS __proto__, 1 AS other";
    const row = db.prepare(sql).get() as Record<string, unknown>;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(row).toEqual(plain.prepare(sql).get());
    expect(row.polluted).toBeUndefined();
    plain.close();
  });
});
