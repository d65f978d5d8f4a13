import { describe, expect, it } from 'vitest';
import { type Db, transactionOf } from '../../src/db/connection.js';
import { createTestDb } from '../helpers/test-db.js';

// transactionOf makes a handle's transaction function once and runs its body on that handle, with the arguments given.

const setting = (db: Db, key: string) => db.prepare<{ key: string }, string>('SELECT value FROM settings WHERE key = :key').pluck().get({ key });

describe('transactionOf', () => {
  const put = transactionOf((db: Db, key: string, value: string, fail: boolean) => {
    db.prepare('INSERT INTO settings (key, value) VALUES (:key, :value)').run({ key, value });
    if (fail) throw new Error('refused');
    return `${key}=${value}`;
  });

  it('gives one transaction per handle, runs the body on that handle with the arguments, and rolls back a throw', () => {
    const a = createTestDb().db;
    const b = createTestDb().db;
    expect(put(a)).toBe(put(a));
    expect(put(a)).not.toBe(put(b));
    expect(put(a).immediate('x', '1', false)).toBe('x=1');
    expect(put(b).immediate('x', '2', false)).toBe('x=2');
    expect([setting(a, 'x'), setting(b, 'x')]).toEqual(['1', '2']);
    expect(() => put(a).immediate('y', '3', true)).toThrow('refused');
    expect(setting(a, 'y')).toBeUndefined();
    expect(a.inTransaction).toBe(false);
  });

  it('inside another transaction of the handle, runs as a savepoint of it', () => {
    const { db } = createTestDb();
    db.transaction(() => {
      put(db)('inner', 'kept', false);
      expect(() => put(db)('failed', 'x', true)).toThrow('refused');
      expect(db.inTransaction).toBe(true);
    })();
    expect([setting(db, 'inner'), setting(db, 'failed')]).toEqual(['kept', undefined]);
  });
});
