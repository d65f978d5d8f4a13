import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { listDecidedParticipants } from '../../src/recruiting/decided-participants.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

describe('listDecidedParticipants', () => {
  it('listDecidedParticipants, for a batch with completed, excluded, screened-out and unfinished raters, decides as the console payment CSV does', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a', 'a'], ['b', 'b', 'a', 'tie'], ['a', 'a', 'b', 'a']] });
    const [done, excluded] = batch.raterIds;
    t.db.prepare("UPDATE raters SET status = 'completed', finished_at = last_seen_at, finish_reason = 'cap' WHERE id IN (?, ?)").run(done, excluded);
    t.db.prepare("UPDATE raters SET excluded = 1, exclusion_reason = 'copied answers' WHERE id = ?").run(excluded);
    makeRater(t.db, { batchId: batch.batchId, status: 'screened_out', excluded: true, exclusionReason: 'attention' });
    makeRater(t.db, { batchId: batch.batchId, status: 'withdrew' });

    const decided = await listDecidedParticipants(t.db, batch.batchId, { clock: () => new Date() });
    const admin = await signIn(t.app, t.db, 'admin');
    const csv = await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=full`).expect(200);
    const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(decided?.map((p) => [p.participantId, p.outcome, p.decision, p.why])).toEqual(rows.map((r) => [r.participant_id, r.outcome, r.decision, r.why]));
    expect(decided?.map((p) => p.decision)).toEqual(['approve', 'reject', 'review', 'review', 'reject', 'review']);
    expect(await listDecidedParticipants(t.db, 9999, { clock: () => new Date() })).toBeNull();
  });
});
