// Shared set-up for the Prolific tests: a Prolific batch over the real app and the fake Prolific, raters walking the
// real rater pages from the link Prolific sends them to, and the CLI's environment.
import { randomBytes } from 'node:crypto';
import { afterEach, expect } from 'vitest';
import { setRaterExcluded } from '../../src/rating/rater-admin.js';
import { type FakeProlific, type FakeProlificOptions, startFakeProlific } from '../helpers/fake-prolific.js';
import { buildTestApp, pacedClock } from '../helpers/test-app.js';
import { assignmentOf, inputValue, raterClient, seedBatch } from '../rating/rating-fixtures.js';

// https, as Prolific needs (publish refuses an http or local link); the console signs in behind TLS (agentBehindTls).
export const PUBLIC_URL = 'https://simarena.example';
export const CODES = { completed: 'C0MPL3TE', screenedOut: 'SCR33N0UT', noConsent: 'N0C0NS3NT' };

const fakes: FakeProlific[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

/** A token that looks like Prolific's and is unique to the test, so it can be searched for everywhere. */
export const newToken = () => `ptk_${randomBytes(24).toString('hex')}`;

/** `publicUrl`: the server's (and the CLI's) PUBLIC_URL, when a test needs another than PUBLIC_URL. */
export async function prolificSetup(options: { settings?: Record<string, unknown>; token?: string; open?: boolean; fake?: Omit<FakeProlificOptions, 'token'>; publicUrl?: string } = {}) {
  const token = options.token ?? newToken();
  const fake = await startFakeProlific({ ...options.fake, token });
  fakes.push(fake);
  const env = { PUBLIC_URL: options.publicUrl ?? PUBLIC_URL, TRUST_PROXY: '1', PROLIFIC_API_URL: fake.url, PROLIFIC_API_TOKEN: token };
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
      pay: '£2.00',
      bonus: { fixed: '0.50' },
      provider: { kind: 'prolific', completionCodes: CODES, screenOutPay: '0.30' },
      ...options.settings,
    },
  });
  const cliEnv = { ...env, DATABASE_PATH: built.dbPath, LOG_LEVEL: 'silent' };
  return { ...built, fake, token, seeded, cliEnv, clock, pace };
}

export type Walk = 'complete' | 'screen-out' | 'decline' | 'withdraw';

const sideOf = (leftSide: 'a' | 'b', slot: 'a' | 'b') => (leftSide === slot ? 'left' : 'right');

/**
 * A participant sent by Prolific to the study URL with its placeholders filled walks the real rater pages: consent,
 * instructions, the onboarding pair (answered right, or wrong to be screened out), comparisons to the end. Returns the
 * completion code shown at the end (null when none).
 */
export async function walkFromProlific(setup: Awaited<ReturnType<typeof prolificSetup>>, url: string, walk: Walk): Promise<string | null> {
  const rater = raterClient(setup.app);
  const path = url.slice(PUBLIC_URL.length);
  expect(url.startsWith(`${PUBLIC_URL}/r/`)).toBe(true);
  if (walk === 'decline') {
    const consent = await rater.follow(path);
    const declined = await rater.submit(consent.res.text, { decision: 'decline' });
    const done = await rater.follow(String(declined.headers.location));
    return codeOf(done.res.text);
  }
  let page = await rater.startRating(setup.seeded.publicId, path.slice(path.indexOf('?')));
  if (walk === 'withdraw') {
    const rt = inputValue(page.res.text, 'rt');
    const confirm = await rater.follow(`/r/${setup.seeded.publicId}/withdraw?rt=${encodeURIComponent(rt)}`);
    const res = await rater.submit(confirm.res.text, {});
    const done = await rater.follow(String(res.headers.location));
    return codeOf(done.res.text);
  }
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
  return codeOf(page.res.text);
}

function codeOf(html: string): string | null {
  return /cc=([A-Za-z0-9-]+)/.exec(html)?.[1] ?? null;
}

/** Excludes a rater by a researcher, as the console's exclude button does. */
export function excludeParticipant(setup: Awaited<ReturnType<typeof prolificSetup>>, participantId: string): void {
  const raterId = setup.db.prepare<{ p: string }, number>('SELECT id FROM raters WHERE participant_id = :p').pluck().get({ p: participantId }) as number;
  setRaterExcluded(setup.db, { batchId: setup.seeded.batchId, raterId, excluded: true, reason: 'answers copied between pairs' }, 'admin@example.org', new Date());
}

export const participantIds = (n: number) => Array.from({ length: n }, (_, i) => `6${i.toString(16).padStart(23, '0')}`);
