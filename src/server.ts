// Boot: config → listen → database → migrate → first-start content → app → banner. The only file with side effects.
import { createServer, type RequestListener } from 'node:http';
import { createApp } from './app.js';
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { createWriteGate, DatabaseOpenError, limitPageCache, openDatabase, SERVER_PAGE_CACHE_KIB, useWriteGate } from './db/connection.js';
import { DatabaseTooNewError, migrate } from './db/migrate.js';
import { prepareFirstStart } from './first-start.js';
import { adminWithUnshownPassword, firstAdminNeverSignedIn, markAdminPasswordShown } from './auth/unshown-password.queries.js';
import { ScenarioFileError } from './scenarios/library-error.js';
import { resolveSessionSecret } from './web/session-secret.js';
import { createLogger } from './web/logger.js';
import { recordServedPublicUrl } from './web/public-url.queries.js';
import { demoBatchLinks } from './demo/demo-links.js';
import type { RunSupervisor } from './console/run-supervisor.js';
import type { EvaluationSupervisor } from './evaluation/evaluation-supervisor.js';
import { markInterruptedRuns } from './generation/run.queries.js';
import { probeWrite, quickCheck } from './web/storage-health.js';
import { pruneExpiredSessions } from './web/session-store.js';
import { forgetOldLoginFailures } from './auth/login-throttle.js';
import { startBackgroundCheckpoints } from './db/background-checkpoint.js';
import { startAnswerThread } from './rating/answer-thread.js';
import { closeStoppedBatches } from './rating/sequential-stopping.js';
import { followPlatforms } from './recruiting/platform-follow.js';

function fail(message: string): never {
  process.stderr.write(`simarena: ${message}\n`);
  process.exit(1);
}

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

const logger = createLogger(config.logLevel);

// The port is bound before anything is written or announced: a port in use stops the start with nothing done (no
// database, no admin whose one-time password nobody saw). Until the app is ready, requests are answered 503.
let handleRequest: RequestListener = (_req, res) => {
  res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1', 'Cache-Control': 'no-store' });
  res.end('simarena is starting\n');
};
const server = createServer((req, res) => handleRequest(req, res));
// Longer than the reverse proxy's idle timeout, so the proxy never sends a request on a socket the server is closing
// (which shows as sporadic 502s); headersTimeout must exceed keepAliveTimeout (Node's documented rule).
server.keepAliveTimeout = config.keepAliveTimeoutMs;
server.headersTimeout = config.keepAliveTimeoutMs + 5_000;
await new Promise<void>((resolve) => {
  server.once('listening', resolve);
  server.on('error', (error: NodeJS.ErrnoException) => {
    fail(error.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use; set PORT to a free port` : error.message);
  });
  server.listen(config.port, config.host);
});

let db: ReturnType<typeof openDatabase>;
try {
  db = openDatabase(config.databasePath);
  limitPageCache(db, SERVER_PAGE_CACHE_KIB);
  migrate(db);
} catch (error) {
  if (error instanceof DatabaseOpenError) fail(error.message);
  if (error instanceof DatabaseTooNewError) fail(`refusing to start on DATABASE_PATH=${config.databasePath}: ${error.message}`);
  fail(`cannot prepare the database at DATABASE_PATH=${config.databasePath}: ${(error as Error).message}`);
}

// A database that cannot be written, or whose pages are damaged, must stop the start, not fail raters later.
const damage = quickCheck(db);
if (damage) fail(`the database at DATABASE_PATH=${config.databasePath} is damaged (PRAGMA quick_check: ${damage}); restore a backup (docs/operator/backups.md)`);
const storage = probeWrite(db, systemClock());
if (!storage.writable) fail(`cannot write to the database at DATABASE_PATH=${config.databasePath}: ${storage.problem}`);

let firstStart: Awaited<ReturnType<typeof prepareFirstStart>>;
try {
  firstStart = await prepareFirstStart(db, config, systemClock());
} catch (error) {
  if (error instanceof ScenarioFileError) fail(`the built-in scenario library is broken: ${error.message}`);
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

if (firstStart.demoSkipped) logger.info(firstStart.demoSkipped);

// Expired console sessions and old sign-in failure counts are deleted at start and every hour.
function pruneStale(): void {
  try {
    const sessions = pruneExpiredSessions(db, systemClock());
    const failures = forgetOldLoginFailures(db, systemClock());
    if (sessions + failures > 0) logger.info({ sessions, loginFailures: failures }, 'pruned expired sessions and old sign-in failures');
  } catch (error) {
    logger.error({ err: error }, 'could not prune expired sessions');
  }
}
pruneStale();
setInterval(pruneStale, 3_600_000).unref();

// A sequential batch closes itself when its last hold ends (an answer, or a lapse noticed by the next rater request);
// one that nobody visits any more is closed here. The check reads only the database: a restart loses nothing.
function closeFinishedSequentialBatches(): void {
  try {
    const closed = closeStoppedBatches(db, systemClock());
    if (closed.length > 0) logger.info({ batches: closed }, 'closed sequential batches whose comparisons all stopped and whose last hold lapsed');
  } catch (error) {
    logger.error({ err: error }, 'could not close finished sequential batches');
  }
}

// Then each published batch's platform follows it (src/recruiting/platform-follow.ts): the Prolific study paused or
// stopped when the batch is paused, closed or full, the MTurk HITs expired; one check at a time.
let following = false;
async function followBatchesOnPlatforms(): Promise<void> {
  if (following) return;
  following = true;
  try {
    closeFinishedSequentialBatches();
    for (const r of await followPlatforms({ db, config, clock: systemClock, actor: 'server' })) {
      if (r.reached) logger.info({ batchId: r.batchId, platform: r.platform, target: r.target }, 'brought the platform in step with its batch');
      else logger.warn({ batchId: r.batchId, platform: r.platform, target: r.target, problem: r.problem }, 'could not bring the platform in step with its batch');
    }
  } catch (error) {
    logger.error({ err: error }, 'could not bring platforms in step with their batches');
  } finally {
    following = false;
  }
}
setInterval(() => void followBatchesOnPlatforms(), config.platformFollowSeconds * 1000).unref();

// A run left 'running' by a process that died (crash, kill, reboot) becomes 'interrupted': resumable, never half-counted.
const interrupted = markInterruptedRuns(db, systemClock(), { atStart: true });
if (interrupted.length > 0) logger.warn({ runs: interrupted }, 'generation runs left running by a stopped process are now interrupted (resume them)');

// The request thread and the answer thread (below) take one gate around their writes (src/db/connection.ts).
const writeGate = db.memory ? null : createWriteGate();
if (writeGate) useWriteGate(db, writeGate);

// The log's checkpoints run in a thread of their own, never on a rater's request (src/db/background-checkpoint.ts).
const checkpoints = db.memory
  ? null
  : await startBackgroundCheckpoints(db, {
      writeGate,
      // Once per run of failures (the thread retries every 200 ms), and once when they succeed again.
      onError: (problem) => logger.warn({ problem }, 'background checkpoints failed; the server checkpoints on its own commits meanwhile'),
      onRecovered: (failedAttempts) => logger.info({ failedAttempts }, 'background checkpoints succeed again; the server no longer checkpoints on its own commits'),
    }).catch((error: Error) => {
      logger.warn({ err: error }, 'could not start background checkpoints; the server checkpoints on its own commits');
      return null;
    });

// Answers are stored, and the next comparison leased, on a thread of their own (src/rating/answer-thread.ts).
const answerThread = !writeGate
  ? null
  : startAnswerThread(db, {
      writeGate,
      checkpointsElsewhere: checkpoints !== null,
      onError: (problem) => logger.warn({ problem }, 'the answer thread stopped; answers are stored on the request thread until it starts again'),
    });

const sessionSecret = resolveSessionSecret(db, config.sessionSecret);
const app = createApp({ db, config, logger, sessionSecret, clock: systemClock, answerThread });

handleRequest = app;

const address = server.address();
const port = typeof address === 'object' && address ? address.port : config.port;
const base = config.publicUrl.replace(`:${config.port}`, `:${port}`);
// The CLI on this database prints rater links to this address (src/cli/public-url.ts).
recordServedPublicUrl(db, base);
const lines = [`simarena is listening on http://${config.host}:${port}`, `  Admin console: ${base}/console`];
if (firstStart.admin?.generatedPassword) {
  lines.push(`  Admin account created: ${firstStart.admin.email} / ${firstStart.admin.generatedPassword}  (shown once; change it in the console)`);
} else if (firstStart.admin) {
  lines.push(`  Admin account created: ${firstStart.admin.email} (password from ADMIN_PASSWORD)`);
}
const unshown = firstStart.admin ? null : adminWithUnshownPassword(db);
const unused = firstStart.admin || unshown || config.adminPassword ? null : firstAdminNeverSignedIn(db);
if (unshown) {
  lines.push(`  Admin account ${unshown} was created at an earlier start that stopped before showing its password; set one with: simarena users reset-password --email ${unshown}`);
} else if (unused) {
  lines.push(`  Admin account ${unused} has never signed in; if you never saw its password, set one with: simarena users reset-password --email ${unused}`);
}
for (const link of demoBatchLinks(db, base)) lines.push(`  Rater link of demo batch "${link.name}": ${link.url}`);
process.stdout.write(`${lines.join('\n')}\n`);
if (firstStart.admin?.generatedPassword) markAdminPasswordShown(db);

// Graceful shutdown: stop accepting, let in-flight requests finish, then close the database.
let stopping = false;
function shutdown(signal: string): void {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    logger.warn('requests still open after 10 s; closing them');
    server.closeAllConnections();
  }, 10_000);
  force.unref();
  // Runs generating in this process stop at a clean point (state 'paused', every stored call kept) before the database closes.
  const runs = app.locals.runSupervisor as RunSupervisor;
  const evaluations = app.locals.evaluationSupervisor as EvaluationSupervisor;
  server.close(() => {
    void Promise.all([runs.pauseAll(), evaluations.pauseAll(), checkpoints?.stop(), answerThread?.stop()]).finally(() => {
      db.close();
      process.stdout.write('simarena stopped\n');
      process.exit(0);
    });
  });
  server.closeIdleConnections();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
