// GET /api/batches/:id/judgments picks each page's judgments from an index before joining them, and its total comes
// from the counts migration 025 keeps (issue 12: 1 s per deep page at a million judgments). Checked here against the
// judgments the test stored, listed and counted from the rows themselves: every page, every question, nothing of
// another batch, in the export's pair-then-judgment order.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { makeUser, tokenFor } from '../auth/session-helpers.js';
import { makeTwoQuestionBatch } from '../analysis/two-question-fixture.js';
import { makeBatchWithJudgments, makeJudgment, makePair, makeRater } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

/** The record's spelling of a stored winner (the Arena's, as the export writes it). */
const WINNER: Record<string, string> = { a: 'model_a', b: 'model_b', tie: 'tie' };

type Listed = { judgment_id: number; question_id: string; pair_id: number; winner: string; excluded: boolean; is_gold: boolean };

async function setup() {
  const t = buildTestApp();
  const made = makeTwoQuestionBatch(t.db);
  // Another batch's judgments, stored in between, must show in neither its pages nor its total.
  const other = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['tie', 'a']] });
  // A gold pair's judgment and an excluded rater's: the API lists them (flagged), so they count too.
  const shown = t.db.prepare('SELECT dialogue_a_id AS a, dialogue_b_id AS b FROM pairs WHERE id = ?').get(made.pairIds[0]) as { a: number; b: number };
  const gold = makePair(t.db, { batchId: made.batchId, comparisonId: null, dialogueA: shown.b, dialogueB: shown.a, kind: 'attention', expected: 'a' });
  const excluded = makeRater(t.db, { batchId: made.batchId, excluded: true, exclusionReason: 'too fast' });
  makeJudgment(t.db, { pairId: gold, raterId: excluded, winner: 'b' });
  makeJudgment(t.db, { pairId: made.pairIds[0] as number, raterId: excluded, winner: 'a' });
  const user = await makeUser(t.db, 'researcher');
  return { t, made, other, token: tokenFor(t.db, user.email) };
}

/** The batch's judgments as the rows say, in the order the export and the API promise (pair, then judgment). */
function storedRows(t: ReturnType<typeof buildTestApp>, batchId: number, question: string | null) {
  return t.db
    .prepare<{ b: number; q: string | null }, { id: number; question_id: string; pair_id: number; winner: string }>(
      'SELECT id, question_id, pair_id, winner FROM judgments WHERE batch_id = :b AND (:q IS NULL OR question_id = :q) ORDER BY pair_id, id',
    )
    .all({ b: batchId, q: question });
}

async function everyPage(t: ReturnType<typeof buildTestApp>, token: string, path: string, perPage: number) {
  const pages: { data: Listed[]; pagination: { page: number; per_page: number; total: number; pages: number; next_after: string | null } }[] = [];
  for (let page = 1; ; page++) {
    const res = await request(t.app).get(`${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}&page=${page}`).set('Authorization', `Bearer ${token}`).expect(200);
    pages.push(res.body);
    if (page >= res.body.pagination.pages) break;
  }
  return pages;
}

describe('GET /api/batches/:id/judgments over many pages', () => {
  it('GET /api/batches/:id/judgments, paged 4 at a time over a two-question batch beside another batch, lists every stored judgment once in pair order with the counted total', async () => {
    const { t, made, token } = await setup();
    const stored = storedRows(t, made.batchId, null);
    expect(stored.length).toBe(11 + 11 + 2); // the fixture's natural and goals answers, the excluded rater's two
    const pages = await everyPage(t, token, `/api/batches/${made.batchId}/judgments`, 4);
    expect(pages.map((p) => p.pagination.total)).toEqual(pages.map(() => stored.length));
    expect(pages).toHaveLength(Math.ceil(stored.length / 4));
    const listed = pages.flatMap((p) => p.data);
    expect(listed.map((j) => [j.judgment_id, j.question_id, j.pair_id, j.winner])).toEqual(stored.map((r) => [r.id, r.question_id, r.pair_id, WINNER[r.winner]]));
    expect(listed.filter((j) => j.is_gold)).toHaveLength(1);
    expect(listed.filter((j) => j.excluded)).toHaveLength(2);
  });

  it('GET /api/batches/:id/judgments?question=goals, paged 3 at a time, lists that question\'s judgments alone with their counted total', async () => {
    const { t, made, token } = await setup();
    const stored = storedRows(t, made.batchId, 'goals');
    const pages = await everyPage(t, token, `/api/batches/${made.batchId}/judgments?question=goals`, 3);
    expect(pages[0]?.pagination).toEqual({ page: 1, per_page: 3, total: stored.length, pages: Math.ceil(stored.length / 3), next_after: expect.any(String) });
    expect(pages.flatMap((p) => p.data).map((j) => [j.judgment_id, j.question_id, j.winner])).toEqual(stored.map((r) => [r.id, 'goals', WINNER[r.winner]]));
  });

  it('GET /api/batches/:id/judgments, past the last page or for a batch without judgments, lists none with the counted total', async () => {
    const { t, made, other, token } = await setup();
    const past = await request(t.app).get(`/api/batches/${made.batchId}/judgments?per_page=10&page=9`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 9, per_page: 10, total: storedRows(t, made.batchId, null).length, pages: 3, next_after: null } });
    const otherPage = await request(t.app).get(`/api/batches/${other.batchId}/judgments`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(otherPage.body.pagination.total).toBe(storedRows(t, other.batchId, null).length);
    t.db.prepare('DELETE FROM judgments WHERE batch_id = ?').run(other.batchId);
    const emptied = await request(t.app).get(`/api/batches/${other.batchId}/judgments`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(emptied.body).toEqual({ data: [], pagination: { page: 1, per_page: 500, total: 0, pages: 0, next_after: null } });
  });

  /** Every page from the first by following `next_after`; each response as the client got it. */
  async function everyPageByCursor(t: ReturnType<typeof buildTestApp>, token: string, path: string, perPage: number) {
    const get = async (after: string | null) =>
      (await request(t.app).get(`${path}${path.includes('?') ? '&' : '?'}per_page=${perPage}${after ? `&after=${after}` : ''}`).set('Authorization', `Bearer ${token}`).expect(200)).body as {
        data: Listed[];
        pagination: { after?: string; per_page: number; total: number; next_after: string | null };
      };
    const pages = [await get(null)];
    for (let next = pages[0]?.pagination.next_after ?? null; next !== null; next = pages.at(-1)?.pagination.next_after ?? null) {
      if (pages.length > 100) throw new Error('next_after never ran out');
      pages.push(await get(next));
    }
    return pages;
  }

  it('GET /api/batches/:id/judgments?after=, following next_after from the first page 4 at a time, lists every stored judgment once in pair order, the same pages as by number, and ends with next_after null', async () => {
    const { t, made, token } = await setup();
    const stored = storedRows(t, made.batchId, null);
    const byCursor = await everyPageByCursor(t, token, `/api/batches/${made.batchId}/judgments`, 4);
    const byNumber = await everyPage(t, token, `/api/batches/${made.batchId}/judgments`, 4);
    expect(byCursor.map((p) => p.data)).toEqual(byNumber.map((p) => p.data));
    expect(byCursor.flatMap((p) => p.data).map((j) => [j.judgment_id, j.pair_id, j.winner])).toEqual(stored.map((r) => [r.id, r.pair_id, WINNER[r.winner]]));
    // Each page's cursor names its last judgment, by pair and judgment; the page it leads to echoes it.
    for (const [i, p] of byCursor.entries()) {
      const last = p.data.at(-1);
      expect(p.pagination.next_after).toBe(i < byCursor.length - 1 && last ? `${last.pair_id}.${last.judgment_id}` : null);
      if (i > 0) expect(p.pagination.after).toBe(byCursor[i - 1]?.pagination.next_after);
      expect(p.pagination.total).toBe(stored.length);
    }
    // 24 judgments, 4 a page: the sixth page is full and the last, so no empty seventh is needed to learn that.
    expect(byCursor).toHaveLength(Math.ceil(stored.length / 4));
    expect(byNumber.at(-1)?.pagination.next_after).toBeNull();
  });

  it('GET /api/batches/:id/judgments?question=goals&after=, followed 3 at a time, lists that question\'s judgments alone', async () => {
    const { t, made, token } = await setup();
    const stored = storedRows(t, made.batchId, 'goals');
    const pages = await everyPageByCursor(t, token, `/api/batches/${made.batchId}/judgments?question=goals`, 3);
    expect(pages.flatMap((p) => p.data).map((j) => [j.judgment_id, j.question_id])).toEqual(stored.map((r) => [r.id, 'goals']));
  });

  it('GET /api/batches/:id/judgments with an after that is not a cursor, or with page and after both, answers 400 with what to send', async () => {
    const { t, made, token } = await setup();
    for (const bad of ['abc', '12', '1.2.3', '-1.2', '1.2e3']) {
      const res = await request(t.app).get(`/api/batches/${made.batchId}/judgments?after=${encodeURIComponent(bad)}`).set('Authorization', `Bearer ${token}`).expect(400);
      expect(JSON.stringify(res.body)).toMatch(/after must be the pagination\.next_after of an earlier page/);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.ts:\d+/);
    }
    const both = await request(t.app).get(`/api/batches/${made.batchId}/judgments?page=2&after=1.1`).set('Authorization', `Bearer ${token}`).expect(400);
    expect(JSON.stringify(both.body)).toMatch(/either page or after, not both/);
    // A cursor past every judgment lists none.
    const past = await request(t.app).get(`/api/batches/${made.batchId}/judgments?after=999999999.1`).set('Authorization', `Bearer ${token}`).expect(200);
    expect(past.body.data).toEqual([]);
    expect(past.body.pagination.next_after).toBeNull();
  });
});
