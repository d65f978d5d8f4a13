import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { tempDir } from '../helpers/test-db.js';

// Migration 057 rebuilds platform_operations (its kind CHECK takes the webhook set-up kinds) with foreign keys off
// around it. The ledger's rows, the lines and effects that refer to them, and its two triggers must survive it.

describe('migration 057 (webhook operation kinds)', () => {
  it('on a database at 056 with a ledger row and its line, keeps both, keeps a confirmed row final and the ledger undeletable, and takes hook_secret', () => {
    const db = openDatabase(join(tempDir(), 'at-056.db'));
    migrate(db, listMigrations().filter((m) => m.version < 57));
    const now = '2026-12-01T10:00:00.000Z';
    db.prepare("INSERT INTO batches (public_id, name, state, settings, judge_salt, created_at) VALUES ('pub0000000000001', 'b', 'open', '{}', 'salt', ?)").run(now);
    db.prepare(
      `INSERT INTO platform_operations (platform, batch_id, kind, idempotency_key, state, attempts, request, answer, actor, created_at, sent_at, answered_at, amount_minor, currency)
       VALUES ('prolific', 1, 'bonus_pay', 'k1', 'confirmed', 1, '{}', '{}', 'cli', ?, ?, ?, 50, 'GBP')`,
    ).run(now, now, now);
    db.prepare("INSERT INTO platform_operation_lines (operation_id, participant_id, amount_minor) VALUES (1, 'p1', 50)").run();
    db.prepare('INSERT INTO platform_operation_effects (operation_id, seen_at) VALUES (1, ?)').run(now);
    expect(migrate(db)).toContain('057-platform-operation-hook-kinds');
    expect(db.prepare('SELECT id, kind, state, amount_minor FROM platform_operations').all()).toEqual([{ id: 1, kind: 'bonus_pay', state: 'confirmed', amount_minor: 50 }]);
    expect(db.prepare('SELECT operation_id, participant_id FROM platform_operation_lines').all()).toEqual([{ operation_id: 1, participant_id: 'p1' }]);
    expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    expect(() => db.prepare("UPDATE platform_operations SET state = 'failed' WHERE id = 1").run()).toThrow('a confirmed platform operation is final');
    expect(() => db.prepare('DELETE FROM platform_operations').run()).toThrow('never deleted');
    db.prepare("INSERT INTO platform_operations (platform, batch_id, kind, idempotency_key, request, actor, created_at) VALUES ('prolific', 1, 'hook_secret', 'k2', '{}', 'cli', ?)").run(now);
    expect(() => db.prepare("INSERT INTO platform_operations (platform, batch_id, kind, idempotency_key, request, actor, created_at) VALUES ('prolific', 1, 'nonsense', 'k3', '{}', 'cli', ?)").run(now)).toThrow(/CHECK/);
  });
});
