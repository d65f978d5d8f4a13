import pino from 'pino';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/clock.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/connection.js';
import { builtInLibraryDir, installLibrary, readLibrary } from '../../src/scenarios/load-library.js';
import { createTestDb } from './test-db.js';
import { type AnswerThread, type AnswerThreadOptions, startAnswerThread } from '../../src/rating/answer-thread.js';

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789';

export type TestApp = { app: ReturnType<typeof createApp>; db: Db; config: Config; dbPath: string; answerThread: AnswerThread | null };

/**
 * The real app over a real SQLite file of the test's own. `answerThread`: answers are stored on an answer thread, as
 * the server stores them (the caller stops it); without, on the request thread.
 */
export function buildTestApp(
  options: { env?: Record<string, string>; clock?: Clock; random?: () => number; withLibrary?: boolean; answerThread?: AnswerThreadOptions } = {},
): TestApp {
  const { db, path } = createTestDb();
  const config = loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent', ...options.env });
  if (options.withLibrary) installLibrary(db, readLibrary(builtInLibraryDir), 'simarena', new Date().toISOString());
  const answerThread = options.answerThread ? startAnswerThread(db, options.answerThread) : null;
  const app = createApp({ db, config, logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET, clock: options.clock, random: options.random, answerThread });
  return { app, db, config, dbPath: path, answerThread };
}

/**
 * A clock for raters who take their time: it runs with the real one but starts two hours behind (so anything a CLI
 * process judges by the real clock lies in its past), and `pace(ms)` moves it on, as a person reading a pair would.
 */
export function pacedClock(behindMs = 2 * 3_600_000) {
  let offset = -behindMs;
  return { clock: (): Date => new Date(Date.now() + offset), pace: (ms: number) => void (offset += ms) };
}
