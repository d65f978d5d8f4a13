// Migration 025: a batch's raters, completed and excluded ones are counted by triggers, and the active ones are found
// among the raters still in progress (the batch page's polled progress.json read every rater: 14 ms per poll at
// 50,000). Checked against counts the test makes itself from the rater rows, as progress.json, the batches list and
// the API show them, after every kind of change: new raters (preview ones too), raters moving through the flow,
// being seen, excluded and included again, their data deleted, and for raters stored before the migration.
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { batchProgress, findBatchListRow } from '../../src/console/batch-progress.queries.js';
import { deleteRaterData, setRaterExcluded } from '../../src/rating/rater-admin.js';
import { makeUser, signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatch, makeBatchWithJudgments, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

let now = new Date('2026-05-01T12:00:00.000Z');
const clock = () => now;
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000).toISOString();

/** What the pages should show, counted here from the rater rows (preview raters are the researchers' own). */
function countedFromRows(db: Db, batchId: number) {
  const rows = db
    .prepare<{ b: number }, { status: string; excluded: number; last_seen_at: string }>("SELECT status, excluded, last_seen_at FROM raters WHERE batch_id = :b AND provider <> 'preview'")
    .all({ b: batchId });
  const since = minutesAgo(5);
  return {
    raters: rows.length,
    raters_active: rows.filter((r) => ['consent', 'instructions', 'onboarding', 'rating'].includes(r.status) && r.last_seen_at >= since).length,
    raters_completed: rows.filter((r) => r.status === 'completed').length,
    raters_excluded: rows.filter((r) => r.excluded === 1).length,
  };
}

describe('batch rater counts', () => {
  it('GET /console/batches/:id/progress.json, /console/batches and /api/batches, as raters come, move on, are seen, excluded and deleted, show the raters the rows hold', async () => {
    now = new Date('2026-05-01T12:00:00.000Z');
    const t = buildTestApp({ clock });
    const made = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'tie'], ['a', null, 'b']] });
    const other = makeBatch(t.db);
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const shown = async (batchId = made.batchId) => {
      const progress = (await admin.agent.get(`/console/batches/${batchId}/progress.json`).expect(200)).body as Record<string, number>;
      const listed = (await request(t.app).get('/api/batches').set('Authorization', `Bearer ${token}`).expect(200)).body as { data: { id: number; raters: number }[] };
      const list = await admin.agent.get('/console/batches').expect(200);
      expect(listed.data.find((b) => b.id === batchId)?.raters).toBe(progress.raters);
      // The list's row: the raters are its last plain cell (ID, name, state, judgments, pairs, raters, created).
      const row = new RegExp(`<a href="/console/batches/${batchId}">[\\s\\S]*?</tr>`).exec(list.text)?.[0] ?? '';
      expect([...row.matchAll(/<td>([^<]*)<\/td>/g)].map((m) => m[1]).at(-1)).toBe(String(progress.raters));
      return { raters: progress.raters, raters_active: progress.raters_active, raters_completed: progress.raters_completed, raters_excluded: progress.raters_excluded };
    };
    const setSeen = (id: number, minutes: number) => t.db.prepare('UPDATE raters SET last_seen_at = ? WHERE id = ?').run(minutesAgo(minutes), id);
    for (const id of made.raterIds) setSeen(id, 1);
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toEqual({ raters: 3, raters_active: 3, raters_completed: 0, raters_excluded: 0 });

    // New raters: a Prolific one consenting, a researcher's preview (never counted), one in another batch.
    const fresh = makeRater(t.db, { batchId: made.batchId, provider: 'prolific', status: 'consent' });
    setSeen(fresh, 0);
    const preview = Number(
      t.db
        .prepare("INSERT INTO raters (batch_id, public_id, provider, session_id, status, created_at, last_seen_at) VALUES (?, 'preview-1', 'preview', 's-preview', 'rating', ?, ?)")
        .run(made.batchId, minutesAgo(0), minutesAgo(0)).lastInsertRowid,
    );
    makeRater(t.db, { batchId: other.batchId, status: 'completed' });
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toMatchObject({ raters: 4, raters_active: 4 });
    expect(await shown(other.batchId)).toEqual(countedFromRows(t.db, other.batchId));

    // Raters finishing, screened out, merely seen (the status written again unchanged), and time passing.
    const [r0, r1, r2] = made.raterIds as [number, number, number];
    t.db.prepare("UPDATE raters SET status = 'completed', finish_reason = 'cap' WHERE id = ?").run(r0);
    t.db.prepare("UPDATE raters SET status = 'screened_out', excluded = 1, exclusion_reason = 'attention' WHERE id = ?").run(r1);
    t.db.prepare("UPDATE raters SET status = 'rating', last_seen_at = ? WHERE id = ?").run(minutesAgo(0), r2);
    t.db.prepare("UPDATE raters SET status = 'completed' WHERE id = ?").run(preview);
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toEqual({ raters: 4, raters_active: 2, raters_completed: 1, raters_excluded: 1 });
    now = new Date(now.getTime() + 6 * 60_000);
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toMatchObject({ raters_active: 0 });

    // A researcher's exclusion and inclusion, then a participant's data deleted (the rater row goes).
    setRaterExcluded(t.db, { batchId: made.batchId, raterId: r0, excluded: true, reason: 'too fast' }, 'test', now);
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toMatchObject({ raters_completed: 1, raters_excluded: 2 });
    setRaterExcluded(t.db, { batchId: made.batchId, raterId: r0, excluded: false, reason: 'checked' }, 'test', now);
    deleteRaterData(t.db, { batchId: made.batchId, raterId: r0, reason: 'asked us to' }, 'test', now);
    expect(await shown()).toEqual(countedFromRows(t.db, made.batchId));
    expect(await shown()).toEqual({ raters: 3, raters_active: 0, raters_completed: 0, raters_excluded: 1 });

    // The whole batch deleted: its counts go with it; the other batch's stay.
    t.db.prepare('DELETE FROM batches WHERE id = ?').run(made.batchId);
    expect(t.db.prepare('SELECT count(*) FROM batch_rater_counts WHERE batch_id = ?').pluck().get(made.batchId)).toBe(0);
    expect(await shown(other.batchId)).toEqual({ raters: 1, raters_active: 0, raters_completed: 1, raters_excluded: 0 });
  });

  it('migration 025 counts the raters stored before it', () => {
    now = new Date('2026-05-01T12:00:00.000Z');
    const db = openDatabase(join(tempDir(), 'old.db'));
    const all = listMigrations();
    migrate(
      db,
      all.filter((m) => m.version < 25),
    );
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b', 'tie']] });
    const empty = makeBatch(db);
    db.prepare("UPDATE raters SET status = 'completed' WHERE id = ?").run(made.raterIds[0]);
    db.prepare('UPDATE raters SET excluded = 1, last_seen_at = ? WHERE id = ?').run(minutesAgo(1), made.raterIds[1]);
    migrate(db, all);
    const progress = (batchId: number) => {
      const p = batchProgress(db, batchId, now);
      return { raters: p?.raters, raters_active: p?.raters_active, raters_completed: p?.raters_completed, raters_excluded: p?.raters_excluded };
    };
    expect(progress(made.batchId)).toEqual(countedFromRows(db, made.batchId));
    expect(progress(made.batchId)).toEqual({ raters: 3, raters_active: 1, raters_completed: 1, raters_excluded: 1 });
    expect(findBatchListRow(db, made.batchId)?.raters).toBe(3);
    expect(progress(empty.batchId)).toEqual({ raters: 0, raters_active: 0, raters_completed: 0, raters_excluded: 0 });
    db.close();
  });
});
