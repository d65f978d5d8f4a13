import { describe, expect, it } from 'vitest';
import { cachedBatchRow, cachedBatchRowByPublicId } from '../../src/batches/batch-row-cache.js';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { openDatabase } from '../../src/db/connection.js';
import { makeBatch } from '../helpers/factories.js';
import { createTestDb } from '../helpers/test-db.js';

const NOW = new Date('2026-03-01T10:00:00Z');

describe('batch rows kept for the rater path (src/batches/batch-row-cache.ts)', () => {
  it('cachedBatchRowByPublicId, read twice with nothing changed between, returns the row the database holds without reading it again', () => {
    const { db } = createTestDb();
    const batch = makeBatch(db);
    const first = cachedBatchRowByPublicId(db, batch.publicId);
    expect(first).toMatchObject({ id: batch.batchId, public_id: batch.publicId, state: 'open' });
    // The same object: it was not read again (and it is frozen, since every caller shares it).
    expect(cachedBatchRowByPublicId(db, batch.publicId)).toBe(first);
    expect(cachedBatchRow(db, batch.batchId)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(cachedBatchRowByPublicId(db, 'no-such-batch')).toBeUndefined();
  });

  it('cachedBatchRowByPublicId, after this handle changes the batch (a command or plain SQL), returns the changed row at once', () => {
    const { db } = createTestDb();
    const batch = makeBatch(db);
    expect(cachedBatchRowByPublicId(db, batch.publicId)?.state).toBe('open');

    transitionBatch(db, batch.batchId, 'pause', 'admin', NOW);
    expect(cachedBatchRowByPublicId(db, batch.publicId)?.state).toBe('paused');

    db.prepare("UPDATE batches SET state = 'closed', name = 'renamed' WHERE id = ?").run(batch.batchId);
    expect(cachedBatchRowByPublicId(db, batch.publicId)).toMatchObject({ state: 'closed', name: 'renamed' });
    expect(cachedBatchRow(db, batch.batchId)).toMatchObject({ state: 'closed', name: 'renamed' });
  });

  it('cachedBatchRow, inside a transaction that changes the batch, returns the changed row, and the old one again after its rollback', () => {
    const { db } = createTestDb();
    const batch = makeBatch(db);
    expect(cachedBatchRow(db, batch.batchId)?.state).toBe('open');
    expect(() =>
      db.transaction(() => {
        db.prepare("UPDATE batches SET state = 'closed' WHERE id = ?").run(batch.batchId);
        expect(cachedBatchRow(db, batch.batchId)?.state).toBe('closed');
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(cachedBatchRow(db, batch.batchId)?.state).toBe('open');
  });

  it('cachedBatchRowByPublicId, after another connection (the CLI, a second server process) commits a change, returns the changed row inside a transaction at once and outside one from the next turn of the event loop', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatch(db);
    const settingsBefore = cachedBatchRowByPublicId(db, batch.publicId)?.settings;
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const other = openDatabase(path);
    try {
      other.prepare("UPDATE batches SET state = 'paused', settings = json_set(settings, '$.name', 'edited elsewhere') WHERE id = ?").run(batch.batchId);
      // The answer's and the lease's IMMEDIATE transactions see it at once.
      db.transaction(() => {
        expect(cachedBatchRow(db, batch.batchId)?.state).toBe('paused');
      }).immediate();
      await nextTurn();
      const after = cachedBatchRowByPublicId(db, batch.publicId);
      expect(after?.state).toBe('paused');
      expect(after?.settings).not.toBe(settingsBefore);
      expect(JSON.parse(after?.settings ?? '{}')).toMatchObject({ name: 'edited elsewhere' });

      other.prepare("UPDATE batches SET state = 'closed' WHERE id = ?").run(batch.batchId);
      await nextTurn();
      expect(cachedBatchRowByPublicId(db, batch.publicId)?.state).toBe('closed');
      expect(cachedBatchRow(db, batch.batchId)?.state).toBe('closed');
    } finally {
      other.close();
    }
  });

  it('reads SQLite\'s data version once per turn of the event loop outside a transaction: a change committed elsewhere within the turn is seen from the next one', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatch(db);
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    await nextTurn();
    const before = cachedBatchRowByPublicId(db, batch.publicId);
    const other = openDatabase(path);
    try {
      other.prepare("UPDATE batches SET name = 'renamed elsewhere' WHERE id = ?").run(batch.batchId);
      // Same turn: the row this turn started with (the same frozen object).
      expect(cachedBatchRowByPublicId(db, batch.publicId)).toBe(before);
      await nextTurn();
      expect(cachedBatchRowByPublicId(db, batch.publicId)?.name).toBe('renamed elsewhere');
    } finally {
      other.close();
    }
  });
});
