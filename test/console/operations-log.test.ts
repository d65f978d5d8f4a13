// The console's log of what was sent to MTurk or Prolific. A batch settled on MTurk records an approval and a bonus per
// worker, so at 50,000 workers the unpaged log was 100,000 rows: 1.2 s to read and render on the request thread and a
// 28.5 MB page. It is now read a page at a time, newest first (migration 081 gives the order), under a sum of the
// operations by kind and state.
import { describe, expect, it } from 'vitest';
import { listBatchOperationsPage, markOperationAnswered, markOperationSent, recordOperation } from '../../src/recruiting/platform-operations.queries.js';
import { signIn } from '../auth/session-helpers.js';
import { buildTestApp } from '../helpers/test-app.js';
import { seedBatch } from '../rating/rating-fixtures.js';

const WORKERS = 60;

/** What a settle of WORKERS workers records: an approval and a bonus each, in that order; one approval refused. */
function settled(t: ReturnType<typeof buildTestApp>, batchId: number) {
  const now = new Date('2026-12-04T10:00:00.000Z');
  for (let w = 1; w <= WORKERS; w++) {
    for (const kind of ['approve', 'bonus'] as const) {
      const { operation } = recordOperation(
        t.db,
        {
          platform: 'mturk',
          batchId,
          kind,
          idempotencyKey: `${kind}:A${w}WORKER`,
          participantId: `A${w}WORKER`,
          assignmentId: `ASSIGN${w}`,
          amountMinor: kind === 'bonus' ? 25 : null,
          currency: kind === 'bonus' ? 'USD' : null,
          request: {},
          actor: 'admin@example.org',
        },
        now,
      );
      markOperationSent(t.db, operation.id, now);
      const refused = kind === 'approve' && w === 7;
      markOperationAnswered(t.db, operation.id, refused ? { state: 'failed', error: 'This operation can be called with a status of: Submitted <script>alert(1)</script>' } : { state: 'confirmed' }, now);
    }
  }
}

const rowsOf = (page: string) => [...page.matchAll(/<td>(approve|bonus)[^<]*<\/td>\s*<td>(A\d+WORKER)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`);

describe('the log of what was sent to a platform', () => {
  it('GET /console/batches/:id/mturk, for a batch of 60 settled workers, shows the 120 operations summed up by kind and state and 50 a page, newest first, with the older ones on the next pages', async () => {
    const t = buildTestApp();
    const seeded = seedBatch(t.db, { samples: 4, settings: { provider: { kind: 'mturk' } } });
    settled(t, seeded.batchId);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const base = `/console/batches/${seeded.batchId}/mturk`;

    const first = (await researcher.agent.get(base).expect(200)).text;
    expect(first).toContain('data-log-total="120"');
    expect(first).toContain('120 operations, newest first: approve 59 confirmed, 1 failed; bonus 60 confirmed.');
    const newest = rowsOf(first);
    expect(newest).toHaveLength(50);
    expect(newest.slice(0, 3)).toEqual(['bonus A60WORKER', 'approve A60WORKER', 'bonus A59WORKER']);
    expect(first).toContain('Page 1 of 3');
    expect(first).toContain('href="?page=2&amp;per_page=50"');
    expect(first).not.toContain('← Newer');

    const last = (await researcher.agent.get(`${base}?page=3`).expect(200)).text;
    const oldest = rowsOf(last);
    expect(oldest).toHaveLength(20);
    expect(oldest.slice(-2)).toEqual(['bonus A1WORKER', 'approve A1WORKER']);
    // The refused approval's answer is on the last page, escaped like every platform answer.
    expect(last).toContain('Submitted &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(last).not.toContain('<script>alert(1)');
    expect(last).not.toContain('Older →');

    // Every operation is on exactly one page.
    const middle = rowsOf((await researcher.agent.get(`${base}?page=2`).expect(200)).text);
    expect(new Set([...newest, ...middle, ...oldest]).size).toBe(120);

    const bad = await researcher.agent.get(`${base}?per_page=0`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('per_page');
    expect(bad.text).not.toMatch(/at .*\.ts:\d+/);
  });

  it('the Prolific page reads its own platform\'s log, and a batch with nothing sent says so', async () => {
    const t = buildTestApp();
    const seeded = seedBatch(t.db, { samples: 4 });
    settled(t, seeded.batchId);
    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = (await researcher.agent.get(`/console/batches/${seeded.batchId}/prolific`).expect(200)).text;
    expect(page).toContain('What was sent to Prolific');
    expect(page).toContain('Nothing yet.');
    expect(rowsOf(page)).toHaveLength(0);
  });

  it('reads a page of the log in the order of its index, without sorting the batch\'s operations', () => {
    const t = buildTestApp();
    const seeded = seedBatch(t.db, { samples: 4, settings: { provider: { kind: 'mturk' } } });
    settled(t, seeded.batchId);
    expect(listBatchOperationsPage(t.db, seeded.batchId, 'mturk', 3, 1).map((o) => `${o.kind} ${o.participant_id}`)).toEqual(['approve A60WORKER', 'bonus A59WORKER', 'approve A59WORKER']);
    const plan = (
      t.db
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM platform_operations WHERE batch_id = ? AND platform = 'mturk' ORDER BY id DESC LIMIT 50 OFFSET 0")
        .all(seeded.batchId) as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan.join('\n')).toContain('USING COVERING INDEX platform_operations_log');
    expect(plan.join('\n')).not.toContain('TEMP B-TREE');
  });
});
