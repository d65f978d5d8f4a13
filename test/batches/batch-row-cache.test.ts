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

  it('cachedBatchRowByPublicId, after another connection (the CLI, a second server process) commits a change, returns the changed row at once', () => {
    const { db, path } = createTestDb();
    const batch = makeBatch(db);
    const settingsBefore = cachedBatchRowByPublicId(db, batch.publicId)?.settings;
    const other = openDatabase(path);
    try {
      other.prepare("UPDATE batches SET state = 'paused', settings = json_set(settings, '$.name', 'edited elsewhere') WHERE id = ?").run(batch.batchId);
      const after = cachedBatchRowByPublicId(db, batch.publicId);
      expect(after?.state).toBe('paused');
      expect(after?.settings).not.toBe(settingsBefore);
      expect(JSON.parse(after?.settings ?? '{}')).toMatchObject({ name: 'edited elsewhere' });
      // Inside this handle's own IMMEDIATE transaction too (the one an answer is recorded in).
      other.prepare("UPDATE batches SET state = 'closed' WHERE id = ?").run(batch.batchId);
      db.transaction(() => {
        expect(cachedBatchRow(db, batch.batchId)?.state).toBe('closed');
      }).immediate();
    } finally {
      other.close();
    }
  });
});
