// Shared set-up for rating tests: a run with SCRIPT and AGENTS dialogues per scenario sample, a batch formed by the
// product's own createBatch, opened, and small helpers to walk the rater pages over real HTTP.
import type { Express } from 'express';
import request from 'supertest';
import { afterEach, expect } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import type { BatchSettingsInput } from '../../src/batches/batch.schema.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import type { AnswerThread } from '../../src/rating/answer-thread.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

export const MODEL = 'blindcheck-model-7b';

export type SeededBatch = { batchId: number; publicId: string; runId: number; runName: string; dialogueIds: number[]; pairIds: number[] };

/** A two-question batch's `questions` (issue 16): the first without a tie and with an optional reason, the second the opposite. */
export const TWO_QUESTIONS: NonNullable<BatchSettingsInput['questions']> = [
  { id: 'natural', text: 'Which conversation sounds more natural?', allowTie: false, reason: 'optional' },
  { id: 'goals', text: 'Which conversation better pursues its goals?', allowTie: true, reason: 'off' },
];

let seq = 0;

export function seedBatch(
  db: Db,
  options: { samples?: number; settings?: Partial<BatchSettingsInput>; open?: boolean; random?: () => number } = {},
): SeededBatch {
  const runName = `blindrun-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
  // Each batch its own name: a name another batch has is refused (issue 49).
  const runId = makeRun(db, { name: runName, model: MODEL, modes: ['SCRIPT', 'AGENTS'] });
  const dialogueIds: number[] = [];
  for (let i = 0; i < (options.samples ?? 4); i += 1) {
    const scenario = makeScenario(db);
    dialogueIds.push(makeDialogue(db, { runId, scenario, mode: 'SCRIPT', model: MODEL, turns: makeTurns(6, 8) }));
    dialogueIds.push(makeDialogue(db, { runId, scenario, mode: 'AGENTS', model: MODEL, turns: makeTurns(6, 12) }));
  }
  const created = createBatch(
    db,
    launchReady({
      name: `SCRIPT vs AGENTS ${MODEL} (${runName})`,
      runs: [runName],
      comparisons: [[`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`]],
      provider: { kind: 'link' },
      ...options.settings,
    }),
    { actor: 'test', now: new Date('2026-01-15T12:00:00.000Z'), random: options.random },
  );
  if (options.open !== false) transitionBatch(db, created.batchId, 'open', 'test', new Date('2026-01-15T12:00:00.000Z'));
  const pairIds = db
    .prepare<{ batchId: number }, number>("SELECT id FROM pairs WHERE batch_id = :batchId AND kind = 'regular' ORDER BY id")
    .pluck()
    .all({ batchId: created.batchId });
  return { batchId: created.batchId, publicId: created.publicId, runId, runName, dialogueIds, pairIds };
}

/**
 * A run of SCRIPT, AGENTS and MINDREADERS dialogues (for batches of two comparisons), with `samples` scenario samples;
 * `sample()` adds one more (a sample generated after a batch was formed), returning its scenario id.
 */
export function seedThreeModeRun(db: Db, samples: number) {
  const runName = `three-${Math.random().toString(36).slice(2, 8)}`;
  const runId = makeRun(db, { name: runName, model: MODEL, modes: ['SCRIPT', 'AGENTS', 'MINDREADERS'] });
  const sample = () => {
    const scenario = makeScenario(db);
    for (const mode of ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const) makeDialogue(db, { runId, scenario, mode, model: MODEL, turns: makeTurns(6, 8) });
    return scenario.scenarioId;
  };
  for (let i = 0; i < samples; i++) sample();
  return { runName, runId, sample };
}

/** A value of a hidden or named input in a page. */
export function inputValue(html: string, name: string): string {
  const match = new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html);
  if (!match?.[1] && match?.[1] !== '') throw new Error(`no input ${name} in page`);
  return decodeEntities(match[1]);
}

/** The signed token a form carries: `rt` (a rater's) or, on the consent form before a rater exists, `et` (the entry's). */
export function formTokens(html: string): Record<string, string> {
  const has = (name: string) => new RegExp(`<input[^>]*name="${name}"`).test(html);
  return has('rt') ? { rt: inputValue(html, 'rt') } : has('et') ? { et: inputValue(html, 'et') } : {};
}

export function formAction(html: string, index = 0): string {
  const actions = [...html.matchAll(/<form[^>]*method="post"[^>]*action="([^"]+)"/g)].map((m) => decodeEntities(m[1] ?? ''));
  const action = actions[index];
  if (!action) throw new Error('no post form in page');
  return action;
}

function decodeEntities(text: string): string {
  return text.replace(/&amp;/g, '&').replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

export type Exchange = { method: string; url: string; status: number; headers: Record<string, unknown>; body: string };

/** A rater walking the pages over HTTP, recording every exchange (for the blinding test). */
export function raterClient(app: Express, options: { address?: string } = {}) {
  const log: Exchange[] = [];
  const record = (method: string, url: string, res: request.Response) => {
    log.push({ method, url, status: res.status, headers: res.headers as Record<string, unknown>, body: res.text ?? '' });
    return res;
  };
  const client = {
    log,
    async get(url: string) {
      const req = request(app).get(url);
      return record('GET', url, await (options.address ? req.set('X-Forwarded-For', options.address) : req));
    },
    async post(url: string, form: Record<string, string>) {
      const req = request(app).post(url).type('form');
      return record('POST', url, await (options.address ? req.set('X-Forwarded-For', options.address) : req).send(form));
    },
    /** Follows 303s from a GET until a page; returns the page and its URL. */
    async follow(url: string): Promise<{ url: string; res: request.Response }> {
      let current = url;
      for (let hops = 0; hops < 10; hops += 1) {
        const res = await client.get(current);
        if (res.status !== 303 && res.status !== 302) return { url: current, res };
        current = String(res.headers.location);
      }
      throw new Error('too many redirects');
    },
    /** Submits the page's first post form with extra fields; follows the redirect. */
    async submit(page: string, fields: Record<string, string>, formIndex = 0) {
      const action = formAction(page, formIndex);
      const res = await client.post(action, { _csrf: inputValue(page, '_csrf'), ...formTokens(page), ...fields });
      return res;
    },
    /**
     * From the entry link through consent and instructions to the first comparison page; `consent`: the consent page
     * the rater already opened (opening the link again would hold a second place of their address, issue 49).
     */
    async startRating(publicId: string, query = '', consent?: { res: { status: number; text: string } }) {
      consent ??= await client.follow(`/r/${publicId}${query}`);
      expect(consent.res.status).toBe(200);
      const afterConsent = await client.submit(consent.res.text, { decision: 'agree' });
      expect(afterConsent.status).toBe(303);
      const instructions = await client.follow(String(afterConsent.headers.location));
      const started = await client.submit(instructions.res.text, {});
      expect(started.status).toBe(303);
      return client.follow(String(started.headers.location));
    },
  };
  return client;
}

export const START = new Date('2026-03-01T10:00:00.000Z');

/** A test app on a hand clock that starts at 2026-03-01 10:00 UTC; `advance(ms)` moves it on. `random`: assignment's ties. */
export function testApp(options: { random?: () => number } = {}) {
  let now = START;
  const built = buildTestApp({ clock: () => now, random: options.random });
  return { ...built, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

export const count = (db: Db, sql: string, params: Record<string, unknown> = {}) => db.prepare(sql).pluck().get(params) as number;

/** The assignment (with its pair's gold answer and kind) of a comparison page's URL. */
export function assignmentOf(db: Db, url: string) {
  const publicId = decodeURIComponent(/\/c\/([^/?]+)/.exec(url)?.[1] ?? '');
  return db
    .prepare<{ publicId: string }, { id: number; pair_id: number; left_side: 'a' | 'b'; rater_id: number; state: string; expected: 'a' | 'b' | null; kind: string }>(
      `SELECT a.id, a.pair_id, a.left_side, a.rater_id, a.state, p.expected, p.kind FROM assignments a JOIN pairs p ON p.id = a.pair_id WHERE a.public_id = :publicId`,
    )
    .get({ publicId });
}

/** Answers the comparison on the page for condition a or b, wherever it is shown; returns the next page. */
export async function chooseCondition(db: Db, rater: ReturnType<typeof raterClient>, page: { url: string; res: { text: string } }, condition: 'a' | 'b') {
  const assignment = assignmentOf(db, page.url);
  if (!assignment) throw new Error(`not a comparison page: ${page.url}`);
  const res = await rater.submit(page.res.text, { choice: assignment.left_side === condition ? 'left' : 'right' });
  expect(res.status).toBe(303);
  return rater.follow(String(res.headers.location));
}

/** The invariants no interleaving may break. */
export function checkInvariants(db: Db, batchId: number, k: number) {
  const pairs = db
    .prepare<{ batchId: number }, { id: number; accepted: number; accepted_left_a: number; judged: number; judged_left_a: number }>(
      `SELECT p.id, p.accepted, p.accepted_left_a,
         (SELECT count(*) FROM judgments j WHERE j.pair_id = p.id) AS judged,
         (SELECT count(*) FROM judgments j WHERE j.pair_id = p.id AND j.left_side = 'a') AS judged_left_a
       FROM pairs p WHERE p.batch_id = :batchId AND p.kind = 'regular'`,
    )
    .all({ batchId });
  for (const p of pairs) {
    expect(p.judged).toBeLessThanOrEqual(k);
    expect(p.accepted).toBe(p.judged);
    expect(p.accepted_left_a).toBe(p.judged_left_a);
  }
  const doubled = db.prepare('SELECT count(*) FROM (SELECT assignment_id FROM judgments GROUP BY assignment_id HAVING count(*) > 1)').pluck().get();
  expect(doubled).toBe(0);
  const raterTwice = db.prepare('SELECT count(*) FROM (SELECT rater_id, pair_id FROM judgments GROUP BY rater_id, pair_id HAVING count(*) > 1)').pluck().get();
  expect(raterTwice).toBe(0);
  // The counters the triggers keep (migrations 015, 019) equal the rows they stand for, after any interleaving.
  const pairLoads = db
    .prepare(
      `SELECT p.id, p.leased, p.leased_left_a, p.reserved,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.state = 'leased') AS leased_rows,
         (SELECT count(*) FROM assignments a WHERE a.pair_id = p.id AND a.state = 'leased' AND a.left_side = 'a') AS leased_left_a_rows,
         (SELECT count(*) FROM pair_reservations r WHERE r.pair_id = p.id) AS reserved_rows
       FROM pairs p WHERE p.batch_id = :batchId`,
    )
    .all({ batchId }) as { leased: number; leased_left_a: number; reserved: number; leased_rows: number; leased_left_a_rows: number; reserved_rows: number }[];
  for (const p of pairLoads) expect([p.leased, p.leased_left_a, p.reserved]).toEqual([p.leased_rows, p.leased_left_a_rows, p.reserved_rows]);
  const progress = db
    .prepare(
      `SELECT r.judged, r.regular_judged,
         (SELECT count(*) FROM judgments j WHERE j.rater_id = r.id AND j.question_index = 0) AS judged_rows,
         (SELECT count(*) FROM judgments j JOIN pairs p ON p.id = j.pair_id WHERE j.rater_id = r.id AND j.question_index = 0 AND p.kind = 'regular') AS regular_rows
       FROM raters r WHERE r.batch_id = :batchId`,
    )
    .all({ batchId }) as { judged: number; regular_judged: number; judged_rows: number; regular_rows: number }[];
  for (const r of progress) expect([r.judged, r.regular_judged]).toEqual([r.judged_rows, r.regular_rows]);
  return pairs;
}

/**
 * Ten raters in turn lease the one pair of a one-pair batch, each lease expiring (the batch's `leaseMinutes` is 1)
 * before the next rater arrives (`advance` moves the app's clock on); their comparison pages, still to be answered.
 */
export async function lateRaterPages(app: Express, publicId: string, advance: (ms: number) => unknown) {
  const pages = [];
  for (let i = 0; i < 10; i += 1) {
    const rater = raterClient(app);
    const page = await rater.startRating(publicId);
    expect(page.url).toContain('/c/');
    pages.push({ rater, page });
    advance(2 * 60_000);
  }
  return pages;
}

/** Answer threads of the apps threadedApp made, stopped after each test. */
const threads: AnswerThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.stop()));
});

/** Waits until the thread is ready for answers (it is made and started when the app is). */
export async function whenRunning(thread: AnswerThread) {
  for (let i = 0; i < 1_000 && !thread.running(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(thread.running()).toBe(true);
}

/** testApp, with answers stored on an answer thread as the server stores them (src/rating/answer-thread.ts), once it is ready. */
export async function threadedApp(options: { restartDelayMs?: number; bundled?: boolean } = {}) {
  let now = START;
  const problems: string[] = [];
  const built = buildTestApp({
    clock: () => now,
    answerThread: { checkpointsElsewhere: false, restartDelayMs: options.restartDelayMs ?? 60_000, bundled: options.bundled, onError: (problem) => problems.push(problem) },
  });
  const thread = built.answerThread as AnswerThread;
  threads.push(thread);
  await whenRunning(thread);
  return { ...built, thread, problems, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}
