// Rater load: the real server (src/server.ts, its own process, real port) on a fresh database with an open study of
// several hundred pairs; N virtual raters in a closed loop go through the real flow (entry, consent, instructions,
// comparisons: comparison page, answer, redirect) by following the forms and redirects in the HTML they get, for a
// fixed time. The same load runs in the same process against a minimal same-stack skeleton (support/skeleton-server.ts):
// the ratio of the two is the figure (issue 12: ≥ 50% of the skeleton's judgments per second, p99 ≤ 2× the skeleton's),
// both measured in alternating windows (--windows, 3 by default) so that the machine's drift falls on both alike.
// Then the same with 1k, 100k and 1M judgments already stored in the batch (throughput at 1M ≥ 80% of 1k); at the
// largest, a researcher opening the analysis every second during the load (raters' p99 rises < 50 ms; first the same
// pairs of windows with nothing beside the server, the measure's own spread, then with only a busy loop at the analysis
// worker's priority, the floor), the console's batch pages (< 200 ms), the server's peak RSS (VmHWM; < 300 MB) and the
// query plans of the SQL the hot path runs.
//   npx tsx scripts/bench/rater-load.ts [--raters 100] [--seconds 20] [--warmup 3] [--windows 3] [--pairs 900]
//     [--stored 1000,100000,1000000] [--quick] [--profile] [--profile-out FILE] [--no-trace] [--no-analysis] [--analysis-at N] [--analysis-pairs 2]
//     [--think MS] [--compiled-vs-tsx]
// --quick: 8 s runs, stored 1k and 100k only. --profile: one more run at the largest stored count under
// node --cpu-prof, summarised. --analysis-at N: the analysis phase at N stored judgments instead of the largest. The load client is this process; each server is a child process (2 cores shared).
// --think MS: paced instead of as fast as they can: each virtual rater reads every comparison for MS on average (half
// to one and a half times it) before answering, and arrives after a random part of it, so that e.g. 1,000 raters
// reading 10 s make about the largest realistic study's pace (100 judgments/s); a cycle is then the rater's waiting
// per comparison (the comparison page and the answer with its redirect), reading excluded.
// --compiled-vs-tsx: only the production build (npm run build, dist/server.js as npm start runs it) against the same
// server run from src/ through the tsx loader, on the fresh study: start time (spawn to listening, both started
// --windows times in turn), peak RSS and CPU per judgment under the same load in alternating windows.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import type http from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { ADMIN, type BenchStudy, buildStudy, seedStoredJudgments } from './support/bench-study.js';
import { summarizeCpuProfile } from './support/cpu-profile.js';
import { type Browser, consoleBrowser, createAgent, createBrowser, findForms, stepName } from './support/form-client.js';
import { benchDir } from './support/bench-dir.js';
import { median } from './support/median-time.js';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? (argv[i + 1] as string) : fallback;
};
const QUICK = flag('quick');
const WINDOWS = Number(option('windows', '3'));
const RATERS = Number(option('raters', '100'));
const SECONDS = Number(option('seconds', QUICK ? '8' : '20'));
const WARMUP = Number(option('warmup', QUICK ? '2' : '3'));
const PAIRS = Number(option('pairs', '900'));
const ANALYSIS_AT = Number(option('analysis-at', '-1'));
const ANALYSIS_PAIRS = Number(option('analysis-pairs', QUICK ? '1' : '2'));
const THINK_MS = Number(option('think', '0'));
const STORED = option('stored', QUICK ? '1000,100000' : '1000,100000,1000000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);

const here = new URL('.', import.meta.url).pathname;
const root = new URL('../../', import.meta.url).pathname;
const dir = benchDir('simarena-rater-load-');

// Statistics ---------------------------------------------------------------------------------------------------
const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const ms = (x: number) => (Number.isNaN(x) ? '–' : `${x.toFixed(Math.abs(x) < 10 ? 1 : 0)} ms`);

type LoadResult = {
  judgments: number;
  perSecond: number;
  /** Server CPU time (user + system) per judgment in the measured window: robust to a busy machine, unlike wall time. */
  cpuMsPerJudgment: number;
  cycles: number[];
  steps: Map<string, number[]>;
  errors: Map<string, number>;
};

const statusKb = (status: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);

/**
 * The largest resident memory read every 100 ms, per server process (sampleRss). The kernel's own peak (VmHWM) is
 * raised only at some points, not at every page: memory V8 and malloc handed back in between went uncounted, and it
 * missed peaks of up to 13 MB that reading VmRSS every 100 ms saw.
 */
const sampledPeakKb = new Map<number, number>();
function sampleRss(pid: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    try {
      const now = statusKb(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
      sampledPeakKb.set(pid, Math.max(sampledPeakKb.get(pid) ?? 0, now));
    } catch {
      clearInterval(timer);
    }
  }, 100);
  timer.unref();
  return timer;
}

/** A process's peak resident memory so far, in MB: the kernel's (VmHWM), or the sampled one (sampleRss) when higher. */
function peakRssOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.max(statusKb(status, 'VmHWM'), sampledPeakKb.get(pid) ?? 0) / 1024;
}

/** What a process's resident memory is made of now (anonymous: heaps; file: code and mapped files; shmem: SQLite's -shm), MB. */
function rssPartsOf(pid: number | undefined): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const part = (name: string) => (statusKb(status, name) / 1024).toFixed(0);
  return `anonymous ${part('RssAnon')} MB, file ${part('RssFile')} MB, shared memory ${part('RssShmem')} MB`;
}

/** CPU time (ms) a process has used so far, from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const walBytes = (dbPath: string) => {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
};

// Servers ------------------------------------------------------------------------------------------------------
type Server = { origin: string; child: ChildProcess; startMs: number; stop: () => Promise<{ peakRssMb: number }> };

/**
 * The node flags `npm start` gives the server (its heap's generation sizes, V8's pool of helper threads), so the bench
 * runs what is deployed. The skeleton runs with the same ones: the ratio then measures the code, not the runtime's settings.
 */
function startScriptFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => /^--(max-[a-z-]+|v8-pool-size)=\d+$/.test(word));
}
const SERVER_FLAGS = startScriptFlags();

/** Servers still running, ended with this process however it ends (benchDir's Ctrl-C or kill included). */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function startServer(script: string, args: string[], env: Record<string, string>, nodeFlags: string[] = []): Promise<Server> {
  const spawnedAt = performance.now();
  // Compiled JavaScript (dist/) runs as npm start runs it: no loader, source maps on.
  const loader = script.endsWith('.js') ? ['--enable-source-maps'] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...loader, ...nodeFlags, script, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const origin = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 60 s`)), 60_000);
    lines.on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line) ?? /^listening (\d+)/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]?.startsWith('http') ? (m[1] as string) : `http://127.0.0.1:${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  const startMs = performance.now() - spawnedAt;
  const sampling = child.pid === undefined ? undefined : sampleRss(child.pid);
  return {
    origin,
    child,
    startMs,
    stop: async () => {
      const peakRssMb = peakRssOf(child.pid);
      clearInterval(sampling);
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(force);
      return { peakRssMb };
    },
  };
}

const serverEnv = (dbPath: string): Record<string, string> => ({
  DATABASE_PATH: dbPath,
  PORT: '0',
  HOST: '127.0.0.1',
  // Request logging off (the skeleton logs nothing either); warnings and errors still show.
  LOG_LEVEL: 'warn',
  SEED_DEMO: 'false',
  ADMIN_EMAIL: ADMIN.email,
  ADMIN_PASSWORD: ADMIN.password,
  SESSION_SECRET: 'bench-session-secret-bench-session-secret',
});

// Load ---------------------------------------------------------------------------------------------------------
let personCount = 0;
function prolificEntry(origin: string, publicId: string): string {
  personCount += 1;
  const hex = (n: number) => n.toString(16).padStart(24, '0');
  return `${origin}/r/${publicId}?PROLIFIC_PID=${hex(personCount + 0xbe0000)}&STUDY_ID=${hex(0xbe5)}&SESSION_ID=${hex(personCount + 0x5e0000)}`;
}

/**
 * Closed loop: each virtual rater requests, follows redirects, submits the first form the page offers (choosing at
 * random among radio buttons), and when a page offers no form (done, no more comparisons) starts over as a new person.
 */
async function runLoad(server: Pick<Server, 'origin' | 'child'>, entry: () => string, users: number, seconds: number, warmup: number, extra?: (until: number) => Promise<void>): Promise<LoadResult> {
  const { origin } = server;
  const agent: http.Agent = createAgent(users + 4);
  const start = performance.now();
  const measureFrom = start + warmup * 1000;
  const end = measureFrom + seconds * 1000;
  const result: LoadResult = { judgments: 0, perSecond: 0, cpuMsPerJudgment: NaN, cycles: [], steps: new Map(), errors: new Map() };
  let cpuAtStart = NaN;
  let cpuAtEnd = NaN;
  const cpuStart = setTimeout(() => (cpuAtStart = cpuMsOf(server.child.pid)), warmup * 1000);
  const cpuEnd = setTimeout(() => (cpuAtEnd = cpuMsOf(server.child.pid)), (warmup + seconds) * 1000);
  const inWindow = (t0: number, t1: number) => t0 >= measureFrom && t1 <= end;
  const pause = (msToWait: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, Math.min(msToWait, end - performance.now()))));
  const person = async () => {
    // Paced raters arrive spread over one reading time, not all in the first instant.
    if (THINK_MS > 0) await pause(Math.random() * THINK_MS);
    while (performance.now() < end) {
      const browser: Browser = createBrowser(origin, agent);
      let method: 'GET' | 'POST' = 'GET';
      let url = entry();
      let form: [string, string][] | undefined;
      let choicePosted = false;
      let lastChoicePage: number | null = null;
      // Paced: the time spent waiting for the server since the last comparison page (reading excluded).
      let waited = 0;
      for (;;) {
        if (performance.now() >= end) return;
        const t0 = performance.now();
        let reply;
        try {
          reply = await browser.request(method, url, form);
        } catch (error) {
          result.errors.set(String((error as Error).message), (result.errors.get(String((error as Error).message)) ?? 0) + 1);
          break;
        }
        const t1 = performance.now();
        waited += t1 - t0;
        if (inWindow(t0, t1)) {
          const name = stepName(method, url);
          const list = result.steps.get(name) ?? [];
          list.push(reply.ms);
          result.steps.set(name, list);
        }
        if (reply.status >= 300 && reply.status < 400 && reply.location) {
          if (method === 'POST' && choicePosted && inWindow(t0, t1)) result.judgments += 1;
          url = new URL(reply.location, url).toString();
          method = 'GET';
          form = undefined;
          continue;
        }
        if (reply.status !== 200) {
          const key = `${stepName(method, url)} → ${reply.status}`;
          result.errors.set(key, (result.errors.get(key) ?? 0) + 1);
          break;
        }
        const forms = findForms(reply.body);
        const next = forms[0];
        if (!next) {
          // A person turned away before any comparison (e.g. "This study is full": the study's places are all held).
          if (lastChoicePage === null && inWindow(t0, t1)) {
            const key = `turned away before any comparison: "${/<title>([^<]*)<\/title>/.exec(reply.body)?.[1]?.trim() ?? '?'}"`;
            result.errors.set(key, (result.errors.get(key) ?? 0) + 1);
          }
          break;
        }
        if (next.hasChoice) {
          if (lastChoicePage !== null && choicePosted && inWindow(lastChoicePage, t1)) result.cycles.push(THINK_MS > 0 ? waited : t1 - lastChoicePage);
          lastChoicePage = t1;
          waited = 0;
        }
        // The page's script fills the time spent reading; a person takes 8 to 58 s.
        form = next.fields.map(([n, v]) => [n, v === '' && /_ms$/.test(n) ? String(8000 + Math.floor(Math.random() * 50000)) : v]);
        choicePosted = next.hasChoice;
        method = 'POST';
        url = new URL(next.action, url).toString();
        if (THINK_MS > 0 && next.hasChoice) await pause(THINK_MS * (0.5 + Math.random()));
      }
    }
  };
  await Promise.all([...Array.from({ length: users }, person), extra ? extra(end) : Promise.resolve()]);
  agent.destroy();
  clearTimeout(cpuStart);
  clearTimeout(cpuEnd);
  result.perSecond = result.judgments / seconds;
  result.cpuMsPerJudgment = (cpuAtEnd - cpuAtStart) / result.judgments;
  return result;
}

function printLoad(label: string, r: LoadResult, skeleton?: LoadResult): void {
  const ratio = skeleton ? `  (${((100 * r.perSecond) / skeleton.perSecond).toFixed(0)}% of the skeleton's)` : '';
  console.log(`${label}: ${r.perSecond.toFixed(0)} judgments/s${ratio}; cycle p50 ${ms(quantile(r.cycles, 0.5))}, p99 ${ms(quantile(r.cycles, 0.99))}` +
    (skeleton ? ` (p99 ${(quantile(r.cycles, 0.99) / quantile(skeleton.cycles, 0.99)).toFixed(2)}× the skeleton's)` : ''));
  console.log(`    server CPU ${r.cpuMsPerJudgment.toFixed(2)} ms per judgment` + (skeleton ? ` (skeleton ${skeleton.cpuMsPerJudgment.toFixed(2)} ms: simarena does ${((100 * skeleton.cpuMsPerJudgment) / r.cpuMsPerJudgment).toFixed(0)}% of the skeleton's judgments per CPU second)` : ''));
  for (const [name, xs] of [...r.steps].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`    ${name.padEnd(42)} n=${String(xs.length).padStart(6)}  p50 ${ms(quantile(xs, 0.5)).padStart(8)}  p99 ${ms(quantile(xs, 0.99)).padStart(8)}`);
  }
  for (const [what, n] of r.errors) console.log(`    error: ${what} ×${n}`);
}

// Console and analysis ---------------------------------------------------------------------------------------------
async function timeConsolePages(origin: string, study: BenchStudy): Promise<void> {
  const agent = createAgent(2);
  const browser = await consoleBrowser(origin, agent, ADMIN);
  const batch = `/console/batches/${study.batchId}`;
  for (const path of ['/console/batches', batch, `${batch}/progress.json`, `${batch}/analysis`, `${batch}/raters`, `${batch}/participants`, `${batch}/edit`]) {
    const times: number[] = [];
    let status = 0;
    for (let i = 0; i < 5; i++) {
      const reply = await browser.request('GET', path);
      status = reply.status;
      times.push(reply.ms);
    }
    console.log(`    console GET ${path.padEnd(36)} status ${status}  first ${ms(times[0] ?? NaN)}, median of 5 ${ms(median(times))}`);
  }
  agent.destroy();
}

/** The whole-batch bundle (judgments, dialogues, analysis HTML) exported through the API once, as a researcher would. */
async function timeBundleExport(origin: string, study: BenchStudy, server: Server): Promise<void> {
  const agent = createAgent(2);
  const browser = createBrowser(origin, agent);
  const peakBefore = peakRssOf(server.child.pid);
  // Meanwhile /healthz every 50 ms: its slowest answer is how long the export held the server's event loop at most.
  let exporting = true;
  const pings: number[] = [];
  const pinger = (async () => {
    const probe = createBrowser(origin, agent);
    while (exporting) {
      pings.push((await probe.request('GET', '/healthz')).ms);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const reply = await browser.request('GET', `/api/batches/${study.batchId}/export?format=bundle`, undefined, { authorization: `Bearer ${study.apiToken}` });
  exporting = false;
  await pinger;
  console.log(
    `    API export of the whole bundle: status ${reply.status}, ${(Buffer.byteLength(reply.body) / 1e6).toFixed(1)} MB (about) in ${ms(reply.ms)}; ` +
      `/healthz meanwhile p50 ${ms(quantile(pings, 0.5))}, slowest ${ms(Math.max(...pings))}; server peak RSS so far ${peakRssOf(server.child.pid).toFixed(0)} MB (${peakBefore.toFixed(0)} MB before the export)`,
  );
  agent.destroy();
}

/**
 * A researcher opening the batch's analysis (JSON API) every second while the raters work, from a process of its own
 * (support/analysis-opener.ts): reading a 14 MB answer in this process held up the virtual raters' own event loop.
 */
function analysisOpener(origin: string, study: BenchStudy, log: string[], via: 'api' | 'console') {
  return async (until: number) => {
    const seconds = Math.max(0, (until - performance.now()) / 1000);
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'support/analysis-opener.ts'), origin, String(study.batchId), study.apiToken, seconds.toFixed(1), via], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => log.push(line));
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  };
}

/**
 * A busy loop beside the server for the window, at the priority the analysis worker takes (the same function,
 * src/analysis/lowest-priority.mjs): what any computation beside a saturated server costs the raters on this machine,
 * whatever it computes. The floor under the analysis's rise.
 */
function lowestPriorityBusyLoop() {
  const lowest = new URL('../../src/analysis/lowest-priority.mjs', import.meta.url).href;
  return async (until: number) => {
    const forMs = Math.max(0, Math.round(until - performance.now()));
    const code = `import { lowerOwnPriority } from ${JSON.stringify(lowest)};
      lowerOwnPriority();
      const end = Date.now() + ${forMs}; while (Date.now() < end) {}`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: 'ignore' });
    await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  };
}

/** What runs beside the server in one window of each pair of the analysis phase: `extra` as runLoad takes it, or nothing. */
type Beside = { what: string; short: string; verdict: string; extra?: (origin: string, log: string[]) => (until: number) => Promise<void> };

/**
 * In order: nothing (what the measure reads by itself: two windows on servers started alike), the busy loop (the
 * floor), then the analysis opened through the API and through the console's page.
 */
function besideTheServer(study: BenchStudy): Beside[] {
  const opened = (via: 'api' | 'console'): Beside => ({
    what: `a researcher opening the analysis (${via}) every second`,
    short: 'the analysis opened',
    verdict: `while the analysis is opened through the ${via} (target < 50 ms)`,
    extra: (origin, log) => analysisOpener(origin, study, log, via),
  });
  return [
    { what: 'nothing beside the server', short: 'nothing beside the server', verdict: 'with nothing beside the server: what the measure reads by itself' },
    {
      what: "a busy loop at the analysis worker's priority beside the server",
      short: 'the busy loop',
      verdict: 'with nothing but a lowest-priority busy loop beside the server: the floor on this machine',
      extra: () => lowestPriorityBusyLoop(),
    },
    opened('api'),
    opened('console'),
  ];
}

/** Puts a level's database back as it was seeded (no stored analysis, no judgments of earlier windows). */
function restoreSeeded(path: string): void {
  for (const file of [`${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
  copyFileSync(`${path}.seeded`, path);
}

// Query plans ------------------------------------------------------------------------------------------------------
function printQueryPlans(dbPath: string, traceFile: string, judgments: number, top = Number(option('trace-top', '12'))): void {
  type Entry = { sql: string; calls: number; ms: number };
  const entries = (JSON.parse(readFileSync(traceFile, 'utf8')) as Entry[]).sort((a, b) => b.ms - a.ms).slice(0, top);
  const db = openDatabase(dbPath);
  const total = entries.reduce((s, e) => s + e.ms, 0);
  console.log(`hot SQL (top ${top} by time in SQLite during the trace run of ${judgments} judgments; ${ms(total)} in these):`);
  for (const e of entries) {
    console.log(`  ${(e.calls / judgments).toFixed(2)} calls/judgment, ${((1000 * e.ms) / judgments).toFixed(0)} µs/judgment, ${(e.ms / e.calls).toFixed(3)} ms each: ${e.sql.replace(/\s+/g, ' ').slice(0, 220)}`);
    try {
      const names = [...new Set([...e.sql.matchAll(/[:@$]([A-Za-z_]\w*)/g)].map((m) => m[1] as string))];
      const positional = (e.sql.match(/\?/g) ?? []).length;
      const stmt = db.prepare(`EXPLAIN QUERY PLAN ${e.sql}`);
      const params: unknown[] = names.length > 0 ? [Object.fromEntries(names.map((n) => [n, null]))] : Array.from({ length: positional }, () => null);
      for (const row of stmt.all(...params) as { detail: string }[]) console.log(`      ${row.detail}`);
    } catch (error) {
      console.log(`      (no plan: ${(error as Error).message})`);
    }
  }
  db.close();
}

// Main -----------------------------------------------------------------------------------------------------------
console.log(
  `rater load: ${RATERS} raters, ${THINK_MS > 0 ? `each reading a comparison ${(THINK_MS / 1000).toFixed(1)} s on average (cycles: their waiting per comparison, reading excluded)` : 'closed loop'}, ` +
    `${WARMUP} s warm-up + ${SECONDS} s measured; study of ${PAIRS} pairs; stored judgments ${STORED.join(', ')}`,
);
const basePath = join(dir, 'base.db');
let study: BenchStudy;
{
  const db = openDatabase(basePath);
  migrate(db);
  study = await buildStudy(db, PAIRS);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
console.log(`study: ${study.pairs} pairs, K = 50, 20 comparisons per rater, Prolific links`);

/**
 * The production build against the sources through tsx (--compiled-vs-tsx): each started WINDOWS times in turn on a
 * copy of the fresh study (start time: spawn to listening), then one of each under the same load in alternating windows.
 */
async function compareCompiledWithTsx(): Promise<void> {
  const built = spawnSync(process.execPath, [join(root, 'scripts/deploy/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
  const kinds = [
    { what: 'tsx (src/server.ts)', script: join(root, 'src/server.ts') },
    { what: 'compiled (dist/server.js)', script: join(root, 'dist/server.js') },
  ];
  const starts: number[][] = kinds.map(() => []);
  let copies = 0;
  const start = (script: string) => {
    const path = join(dir, `compare-${++copies}.db`);
    copyFileSync(basePath, path);
    return startServer(script, [], serverEnv(path), SERVER_FLAGS);
  };
  for (let round = 0; round < WINDOWS; round++) {
    for (const [i, kind] of kinds.entries()) {
      const server = await start(kind.script);
      starts[i]?.push(server.startMs);
      await server.stop();
    }
  }
  const servers: Server[] = [];
  for (const kind of kinds) servers.push(await start(kind.script));
  const parts: LoadResult[][] = kinds.map(() => []);
  for (let w = 0; w < WINDOWS; w++) {
    for (const [i, server] of servers.entries()) {
      parts[i]?.push(await runLoad(server, () => prolificEntry(server.origin, study.publicId), RATERS, SECONDS / WINDOWS, w === 0 ? WARMUP : Math.min(WARMUP, 1)));
    }
  }
  for (const [i, kind] of kinds.entries()) {
    const load = mergeLoads(parts[i] ?? [], SECONDS);
    const { peakRssMb } = (await servers[i]?.stop()) ?? { peakRssMb: NaN };
    printLoad(kind.what, load);
    console.log(`    start to listening: median ${ms(median(starts[i] ?? []))} (${(starts[i] ?? []).map((x) => ms(x)).join(', ')}); peak RSS ${peakRssMb.toFixed(0)} MB`);
  }
}

if (flag('compiled-vs-tsx')) {
  await compareCompiledWithTsx();
  process.exit(0);
}

// The skeleton and simarena are measured in alternating windows (WINDOWS of each, SECONDS in all for each), both
// servers running: the machine's own speed drifts by a fifth within minutes, which measuring one after the other
// turned into the ratio.
let skeletonRuns = 0;
async function startSkeleton(): Promise<Server> {
  skeletonRuns += 1;
  return startServer(join(here, 'support/skeleton-server.ts'), [join(dir, `skeleton-${skeletonRuns}.db`)], {}, SERVER_FLAGS);
}

/** Windows of one load merged as one: judgments and CPU summed, cycles and steps pooled, the rate over their total time. */
function mergeLoads(parts: LoadResult[], seconds: number): LoadResult {
  const merged: LoadResult = { judgments: 0, perSecond: 0, cpuMsPerJudgment: NaN, cycles: [], steps: new Map(), errors: new Map() };
  let cpuMs = 0;
  for (const part of parts) {
    merged.judgments += part.judgments;
    cpuMs += part.cpuMsPerJudgment * part.judgments;
    merged.cycles.push(...part.cycles);
    for (const [name, xs] of part.steps) merged.steps.set(name, [...(merged.steps.get(name) ?? []), ...xs]);
    for (const [what, n] of part.errors) merged.errors.set(what, (merged.errors.get(what) ?? 0) + n);
  }
  merged.perSecond = merged.judgments / seconds;
  merged.cpuMsPerJudgment = cpuMs / merged.judgments;
  return merged;
}

/** The skeleton and a simarena server under the same load in alternating windows; each window starts with its warm-up. */
async function measureAlternating(skeleton: Server, simarena: Server, entry: () => string): Promise<{ skeleton: LoadResult; result: LoadResult }> {
  const window = SECONDS / WINDOWS;
  const parts: { skeleton: LoadResult[]; result: LoadResult[] } = { skeleton: [], result: [] };
  for (let w = 0; w < WINDOWS; w++) {
    // Later windows start on warm servers: a second brings the closed loop back to its pace.
    const warmup = w === 0 ? WARMUP : Math.min(WARMUP, 1);
    parts.skeleton.push(await runLoad(skeleton, () => `${skeleton.origin}/`, RATERS, window, warmup));
    parts.result.push(await runLoad(simarena, entry, RATERS, window, warmup));
  }
  return { skeleton: mergeLoads(parts.skeleton, SECONDS), result: mergeLoads(parts.result, SECONDS) };
}

const byLevel = new Map<number, { result: LoadResult; skeleton: LoadResult }>();
const levels = [0, ...STORED];
const largest = Math.max(...levels);
for (const stored of levels) {
  const path = join(dir, `stored-${stored}.db`);
  copyFileSync(basePath, path);
  if (stored > 0) {
    const db = openDatabase(path);
    const t0 = performance.now();
    seedStoredJudgments(db, study.batchId, stored);
    db.close();
    console.log(`\nseeded ${stored} stored judgments in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  // The database as seeded, for the later phases at this level to start from (the database file alone: a closed
  // connection leaves no log behind).
  copyFileSync(path, `${path}.seeded`);
  const skeletonServer = await startSkeleton();
  const server = await startServer(join(root, 'src/server.ts'), [], serverEnv(path), SERVER_FLAGS);
  const entry = () => prolificEntry(server.origin, study.publicId);
  const { skeleton, result } = await measureAlternating(skeletonServer, server, entry);
  const skeletonPeak = (await skeletonServer.stop()).peakRssMb;
  printLoad('skeleton (Express 5 + express-session/SQLite + EJS page + one INSERT)', skeleton);
  console.log(`    peak RSS ${skeletonPeak.toFixed(0)} MB`);
  byLevel.set(stored, { result, skeleton });
  printLoad(`simarena, ${stored === 0 ? 'fresh study' : `${stored} judgments stored`}`, result, skeleton);
  console.log(`    server peak RSS so far ${peakRssOf(server.child.pid).toFixed(0)} MB; resident now: ${rssPartsOf(server.child.pid)}; write-ahead log ${(walBytes(path) / 1e6).toFixed(1)} MB`);
  let { peakRssMb } = await server.stop();
  if (stored === (ANALYSIS_AT >= 0 ? ANALYSIS_AT : largest) && !flag('no-analysis')) {
    // A window's p99 varies by tens of ms with nothing changed, so the rise is taken over pairs of windows (without, and
    // with the analysis opened) and the median of the pairs' rises is the figure; opened through the API (its JSON) and
    // as the console's page with its plots, the issue's own case. Every window runs on a server started afresh on the
    // database as seeded, so both windows of a pair start from the same state (a second window on the first one's
    // server met its raters' holds and its log), each opens an analysis that must be computed, and the study's pairs are
    // never used up. First what the measure reads with nothing beside the server (its own spread), then the floor: a
    // lowest-priority busy loop beside it.
    let last: Server | null = null;
    for (const beside of besideTheServer(study)) {
      const rises: number[] = [];
      for (let pair = 1; pair <= ANALYSIS_PAIRS; pair++) {
        const log: string[] = [];
        // The window that comes first alternates from pair to pair (the machine drifts); the last pair ends with the
        // one beside, whose server the console's pages and the export are then timed on.
        const besideFirst = (ANALYSIS_PAIRS - pair) % 2 === 1;
        const loads: LoadResult[] = [];
        for (const extra of besideFirst ? [beside.extra, undefined] : [undefined, beside.extra]) {
          if (last) peakRssMb = Math.max(peakRssMb, (await last.stop()).peakRssMb);
          restoreSeeded(path);
          const server = await startServer(join(root, 'src/server.ts'), [], serverEnv(path), SERVER_FLAGS);
          last = server;
          loads.push(await runLoad(server, () => prolificEntry(server.origin, study.publicId), RATERS, SECONDS, WARMUP, extra?.(server.origin, log)));
        }
        const [without, withExtra] = (besideFirst ? [loads[1], loads[0]] : loads) as [LoadResult, LoadResult];
        printLoad(`simarena, ${stored} stored, ${beside.what}, pair ${pair} of ${ANALYSIS_PAIRS}`, withExtra, skeleton);
        const rise = quantile(withExtra.cycles, 0.99) - quantile(without.cycles, 0.99);
        rises.push(rise);
        console.log(
          `    raters' cycle p99 ${ms(quantile(without.cycles, 0.99))} without (${without.perSecond.toFixed(0)} judgments/s), ${ms(quantile(withExtra.cycles, 0.99))} with ${beside.short} (run ${besideFirst ? 'first' : 'second'}): rise ${ms(rise)}`,
        );
        const shown = pair === 1 ? 12 : 3;
        for (const line of log.slice(0, shown)) console.log(`    analysis: ${line}`);
        if (log.length > shown) console.log(`    analysis: … ${log.length - shown} more`);
      }
      console.log(`    raters' cycle p99 rises by ${ms(median(rises))} (median of ${rises.length} pair${rises.length === 1 ? '' : 's'} of windows: ${rises.map((r) => ms(r)).join(', ')}) ${beside.verdict}`);
    }
    if (last) {
      // The last pair's server, its analysis stored: the console's pages, then the whole bundle exported.
      await timeConsolePages(last.origin, study);
      await timeBundleExport(last.origin, study, last);
      const children = readFileSync(`/proc/${last.child.pid}/task/${last.child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      for (const pid of children) console.log(`    analysis worker process ${pid}: peak RSS ${peakRssOf(Number(pid)).toFixed(0)} MB`);
      peakRssMb = Math.max(peakRssMb, (await last.stop()).peakRssMb);
    }
  }
  console.log(`    server peak RSS ${peakRssMb.toFixed(0)} MB${stored === largest ? ' (target < 300 MB)' : ''}`);
  if (stored === largest && !flag('no-trace')) {
    restoreSeeded(path);
    const trace = join(dir, 'sql-trace.json');
    const traced = await startServer(join(root, 'src/server.ts'), [], { ...serverEnv(path), BENCH_SQL_TRACE: trace }, [...SERVER_FLAGS, '--import', join(here, 'support/sql-trace.ts')]);
    const tracedLoad = await runLoad(traced, () => prolificEntry(traced.origin, study.publicId), RATERS, Math.min(SECONDS, 8), 0);
    await traced.stop();
    printQueryPlans(path, trace, tracedLoad.judgments);
  }
  if (stored === largest && flag('profile')) {
    restoreSeeded(path);
    const profDir = join(dir, 'prof');
    const profiled = await startServer(join(root, 'src/server.ts'), [], serverEnv(path), [...SERVER_FLAGS, '--cpu-prof', `--cpu-prof-dir=${profDir}`]);
    await runLoad(profiled, () => prolificEntry(profiled.origin, study.publicId), RATERS, SECONDS, WARMUP);
    await profiled.stop();
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    console.log(`CPU profile of the server under rater load, ${stored} stored:`);
    if (file) for (const line of summarizeCpuProfile(join(profDir, file))) console.log(line);
    const keep = option('profile-out', '');
    if (file && keep) copyFileSync(join(profDir, file), keep);
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}.seeded`]) rmSync(file, { force: true });
}

console.log('\nsummary (each level against the skeleton measured just before it)');
for (const [stored, { result: r, skeleton: k }] of byLevel) {
  console.log(
    `  ${String(stored).padStart(8)} stored: ${r.perSecond.toFixed(0).padStart(5)} judgments/s = ${((100 * r.perSecond) / k.perSecond).toFixed(0)}% of the skeleton's ${k.perSecond.toFixed(0)}; ` +
      `cycle p99 ${ms(quantile(r.cycles, 0.99))} = ${(quantile(r.cycles, 0.99) / quantile(k.cycles, 0.99)).toFixed(2)}× the skeleton's ${ms(quantile(k.cycles, 0.99))}; ` +
      `server CPU ${r.cpuMsPerJudgment.toFixed(2)} ms/judgment = ${(r.cpuMsPerJudgment / k.cpuMsPerJudgment).toFixed(1)}× the skeleton's ${k.cpuMsPerJudgment.toFixed(2)}`,
  );
}
const low = byLevel.get(Math.min(...STORED))?.result;
const high = byLevel.get(largest)?.result;
if (low && high && STORED.length > 1) {
  console.log(`  at ${largest} stored against ${Math.min(...STORED)}: throughput ${((100 * high.perSecond) / low.perSecond).toFixed(0)}%, server CPU per judgment ${((100 * low.cpuMsPerJudgment) / high.cpuMsPerJudgment).toFixed(0)}% as efficient (target ≥ 80%)`);
}
