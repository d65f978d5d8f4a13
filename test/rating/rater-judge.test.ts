// A rater's `judge` pseudonym is stored at consent (migration 023): the console's payment lists read it instead of
// naming every rater again after each start (issue 12). It must be the very pseudonym the exports and the analysis use.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { listQualityDependentRaters } from '../../src/console/rater-table.queries.js';
import { makeUser, tokenFor } from '../auth/session-helpers.js';
import { makeRater } from '../helpers/factories.js';
import { raterClient, seedBatch, testApp } from './rating-fixtures.js';

describe('the judge pseudonym stored with a rater', () => {
  it('POST /r/:batch/consent, for a plain-link and a Prolific rater, stores the judge pseudonym that the judgments API then names their answers by', async () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 4, settings: { perRaterCap: 1, judgmentsPerPair: 2 } });
    const prolific = seedBatch(t.db, { samples: 4, settings: { perRaterCap: 1, judgmentsPerPair: 2, provider: { kind: 'prolific' } } });
    const token = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
    const cases = [
      { batch: seeded, query: '' },
      { batch: prolific, query: `?PROLIFIC_PID=${'a1'.repeat(12)}&STUDY_ID=${'b2'.repeat(12)}&SESSION_ID=${'c3'.repeat(12)}` },
    ];
    for (const { batch, query } of cases) {
      const rater = raterClient(t.app, { address: '203.0.113.9' });
      const page = await rater.startRating(batch.publicId, query);
      expect(page.url).toMatch(/\/c\//);
      const answered = await rater.submit(page.res.text, { choice: 'left' });
      expect(answered.status).toBe(303);
      const stored = t.db.prepare('SELECT judge FROM raters WHERE batch_id = ?').pluck().all(batch.batchId) as (string | null)[];
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatch(/^[0-9a-f]{16}$/);
      const api = await request(t.app).get(`/api/batches/${batch.batchId}/judgments`).set('Authorization', `Bearer ${token}`).expect(200);
      const judges = new Set((api.body as { data: { judge: string }[] }).data.map((j) => j.judge));
      expect([...judges]).toEqual([stored[0]]);
    }
  });

  it("the payment lists' query, for raters with and without a stored pseudonym, gives it where stored and null otherwise, from its index in pseudonym order", () => {
    const t = testApp();
    const seeded = seedBatch(t.db, { samples: 2 });
    const named = makeRater(t.db, { batchId: seeded.batchId, status: 'completed' });
    const older = makeRater(t.db, { batchId: seeded.batchId, status: 'completed' });
    t.db.prepare("UPDATE raters SET judge = '0123456789abcdef' WHERE id = ?").run(named);
    const rows = listQualityDependentRaters(t.db, seeded.batchId, null);
    expect(rows.map((r) => [r.id, r.judge]).sort((a, b) => Number(a[0]) - Number(b[0]))).toEqual([
      [named, '0123456789abcdef'],
      [older, null],
    ]);
    // The query walks this index (INDEXED BY): in pseudonym order after the batch, so that the payment lists' count
    // looks the raters' stored figures up in their own key order (migration 030), with every column it reads.
    const columns = t.db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck().all('raters_completed_included');
    expect(columns).toEqual(['batch_id', 'judge', 'attention_failures', 'onboarding_answered', 'onboarding_correct', 'finish_reason', 'regular_judged']);
  });
});
