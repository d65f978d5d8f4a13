// Shared set-up for the MTurk tests: an MTurk batch over the real app and the fake MTurk, workers walking the real
// rater pages from the URL MTurk frames, and the CLI's environment.
import { randomBytes } from 'node:crypto';
import { afterEach, expect } from 'vitest';
import { setRaterExcluded } from '../../src/rating/rater-admin.js';
import { cli } from '../helpers/run-cli.js';
import { type FakeMturk, startFakeMturk } from '../helpers/fake-mturk.js';
import { buildTestApp, pacedClock } from '../helpers/test-app.js';
import { assignmentOf, inputValue, raterClient, seedBatch } from '../rating/rating-fixtures.js';

// https, as MTurk needs (publish refuses an http or local link); the console signs in behind TLS (agentBehindTls).
export const PUBLIC_URL = 'https://simarena.example';
export const CODES = { completed: 'MTOK4821', screenedOut: 'MTSCR339', noConsent: 'MTNOC117' };

const fakes: FakeMturk[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

/** AWS credentials unique to the test, so they can be searched for everywhere. */
export const newCredentials = () => ({
  accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(30).toString('base64'),
  sessionToken: `IQo${randomBytes(40).toString('base64')}`,
});

/** `publicUrl`: the server's (and the CLI's) PUBLIC_URL, when a test needs another than PUBLIC_URL. */
export async function mturkSetup(options: { settings?: Record<string, unknown>; open?: boolean; publicUrl?: string } = {}) {
  const credentials = newCredentials();
  const fake = await startFakeMturk({ accessKeyId: credentials.accessKeyId });
  fakes.push(fake);
  const env = {
    PUBLIC_URL: options.publicUrl ?? PUBLIC_URL,
    TRUST_PROXY: '1',
    MTURK_ENDPOINT: fake.url,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: credentials.sessionToken,
  };
  // Raters take 20 s a comparison: faster, the server's own shown→submitted time flags them "too fast".
  const { clock, pace } = pacedClock();
  const built = buildTestApp({ env, clock });
  const seeded = seedBatch(built.db, {
    samples: 4,
    open: options.open,
    settings: {
      judgmentsPerPair: 5,
      perRaterCap: 2,
      plannedRaters: 10,
      onboarding: { pairs: 1, threshold: 1 },
      pay: '$2.00',
      bonus: { fixed: '0.50' },
      provider: { kind: 'mturk', completionCodes: CODES },
      mturk: { frameHeight: 800, locales: ['US', 'GB'], minApprovalRate: 98, lifetimeDays: 3 },
      ...options.settings,
    },
  });
  const cliEnv = { ...env, DATABASE_PATH: built.dbPath, LOG_LEVEL: 'silent' };
  return { ...built, fake, credentials, seeded, cliEnv, clock, pace };
}
export type MturkSetup = Awaited<ReturnType<typeof mturkSetup>>;

export type Walk = 'complete' | 'screen-out';

const sideOf = (leftSide: 'a' | 'b', slot: 'a' | 'b') => (leftSide === slot ? 'left' : 'right');

/**
 * A worker framed by MTurk at the ExternalQuestion's URL (assignmentId, hitId, workerId, turkSubmitTo appended) walks
 * the real rater pages to the done page, whose form posts to turkSubmitTo/mturk/externalSubmit; the fake then takes
 * the submission as MTurk would. Returns the completion code the form carries.
 */
export async function walkFromMturk(setup: MturkSetup, url: string, walk: Walk): Promise<string> {
  expect(url.startsWith(`${PUBLIC_URL}/r/${setup.seeded.publicId}?`)).toBe(true);
  const query = url.slice(url.indexOf('?'));
  const rater = raterClient(setup.app);
  let page = await rater.startRating(setup.seeded.publicId, query);
  for (let i = 0; i < 10 && page.url.includes('/c/'); i++) {
    const a = assignmentOf(setup.db, page.url);
    let choice = 'left';
    if (a?.kind === 'onboarding') {
      const right = sideOf(a.left_side, a.expected ?? 'a');
      choice = walk === 'screen-out' ? (right === 'left' ? 'right' : 'left') : right;
    }
    setup.pace(20_000);
    const res = await rater.submit(page.res.text, { choice });
    page = await rater.follow(String(res.headers.location));
  }
  expect(page.url).toMatch(/\/done\?/);
  expect(page.res.text).toContain('action="https://www.mturk.com/mturk/externalSubmit"');
  const assignmentId = inputValue(page.res.text, 'assignmentId');
  const code = inputValue(page.res.text, 'completionCode');
  setup.fake.submitAssignment(assignmentId, code);
  return code;
}

export function excludeWorker(setup: MturkSetup, workerId: string): void {
  const raterId = setup.db.prepare<{ p: string }, number>('SELECT id FROM raters WHERE participant_id = :p').pluck().get({ p: workerId }) as number;
  setRaterExcluded(setup.db, { batchId: setup.seeded.batchId, raterId, excluded: true, reason: 'answers copied between pairs' }, 'admin@example.org', new Date());
}

export const workerIds = (n: number) => Array.from({ length: n }, (_, i) => `A${(i + 1).toString().padStart(3, '0')}WORKER7Q`);

/** The batch published on the fake MTurk, and `n` workers who took its HIT, walked the rater pages and submitted. */
export async function publishedWithWorkers(setup: MturkSetup, n: number) {
  const published = await cli(['mturk', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
  expect(published.stderr).not.toContain('rror');
  expect(published.code).toBe(0);
  const hit = [...setup.fake.hits.values()][0];
  if (!hit) throw new Error('no HIT');
  const assignments = [];
  for (const id of workerIds(n)) {
    const { assignment, url } = setup.fake.acceptHit(hit.HITId, id);
    await walkFromMturk(setup, url, 'complete');
    assignments.push(assignment);
  }
  return { hit, assignments };
}
