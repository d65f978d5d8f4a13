// Live relay (issue 52): 200 role-play conversations at once (400 participants) through the real server (src/server.ts,
// its own process, the npm start memory flags) on a fresh database, against a same-stack relay skeleton
// (support/relay-skeleton.ts: Express 5, one event stream per participant, a POST per turn that stores one SQLite row
// and writes the partner's event; nothing of simarena's relay), both under the same load in alternating windows.
// Conversations start at random phases (within one think time), after a warm-up window of 5 s on each server that is
// not counted. Each participant sends its turn `--think` ms (half to one and a half times it) after its partner's arrived; the figure
// is the delivery latency from just before a turn's POST to its event on the partner's stream, p50 and p99, with the
// ratio of simarena's p99 to the skeleton's (goal: within 1.5x and under 150 ms), and the server's RSS. Then the
// restart check: the server is killed (SIGKILL) in the middle of the load and started again on the same database; the
// streams reconnect with Last-Event-ID, unanswered turns are sent again with their keys, and every conversation is
// checked for lost and doubled turns, in the database and on the partners' streams. The client is this process; each
// server is a child process (the machine's 2 cores are shared: the load average is printed beside the figures).
// --profile: the server runs under node --cpu-prof and, after the windows (no restart check), its profile is summarised
// (--profile-out FILE keeps it). --loop-trace: each window's line adds each server's own event-loop delay and garbage
// collector pauses (support/loop-trace.ts).
//   npx tsx scripts/bench/live-relay.ts [--conversations 200] [--seconds 20] [--windows 2] [--think 1000] [--no-restart] [--profile [--profile-out FILE]] [--sql-trace FILE] [--loop-trace]
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/connection.js';
import { type Conversation, converse, type Origin, receivedCounts, sleep } from './support/live-clients.js';
import { CONVERSATIONS, cpuMsOf, dbPath, dir, load, ms, quantile, rssOf, seed, simarenaConversations, skeletonConversations, start, startSimarena, THINK_MS, window } from './support/live-bench-setup.js';
import { summarizeCpuProfile } from './support/cpu-profile.js';
import { numberFlag, stringFlag } from './support/number-flag.js';

const SECONDS = numberFlag('--seconds', 20);
const WINDOWS = numberFlag('--windows', 2);
const PROFILE = process.argv.includes('--profile');
// --sql-trace FILE: the server counts and times each SQL statement it runs (support/sql-trace.ts), written at its exit.
const SQL_TRACE = stringFlag('--sql-trace');
const PROFILE_OUT = stringFlag('--profile-out');
const RESTART = !process.argv.includes('--no-restart') && !PROFILE && !SQL_TRACE;
// --loop-trace: both servers report their own event loop's delay and the garbage collector's pauses by window.
const LOOP_TRACE = process.argv.includes('--loop-trace');
const profileDir = join(dir, 'profile');
const here = new URL('.', import.meta.url).pathname;

const line = (name: string, xs: number[], more = '') => console.log(`  ${name.padEnd(12)} ${String(xs.length).padStart(7)} turns   p50 ${ms(quantile(xs, 0.5)).padStart(9)}   p99 ${ms(quantile(xs, 0.99)).padStart(9)}${more}`);

const loopTraceFile = (name: string) => join(dir, `loop-${name}.jsonl`);
const loopTraceFlags = LOOP_TRACE ? ['--import', join(here, 'support/loop-trace.ts')] : [];
const loopTraceEnv = (name: string): Record<string, string> => (LOOP_TRACE ? { BENCH_LOOP_TRACE: loopTraceFile(name) } : {});
type LoopTrace = { loopP99Ms: number; loopMaxMs: number; gcPauses: number; gcMs: number; gcPausesOver5Ms: number; gcMaxMs: number };

/** Asks a server for its loop trace since the last ask (support/loop-trace.ts) and waits for its line. */
async function loopTrace(pid: number | undefined, name: string): Promise<LoopTrace | null> {
  const file = loopTraceFile(name);
  const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
  const before = lines().length;
  if (pid === undefined) return null;
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 2_000; waited += 10) {
    const now = lines();
    if (now.length > before) return JSON.parse(now[now.length - 1] as string) as LoopTrace;
    await sleep(10);
  }
  return null;
}

const describeTrace = (t: LoopTrace | null) =>
  t ? `; server loop p99 ${ms(t.loopP99Ms)}, longest ${ms(t.loopMaxMs)}; GC ${t.gcPauses} pauses, ${t.gcMs.toFixed(0)} ms, ${t.gcPausesOver5Ms} over 5 ms, longest ${ms(t.gcMaxMs)}` : '';

/** What the database and the partners' streams hold against what the clients sent and heard answered. */
function verify(conversations: Conversation[]) {
  const db = openDatabase(dbPath);
  const rowsOf = db.prepare<{ id: number }, { idx: number; text: string }>('SELECT idx, text FROM turns WHERE dialogue_id = :id ORDER BY idx');
  const tally = { sent: 0, stored: 0, lost: 0, doubledInDb: 0, notContiguous: 0, missingOnStreams: 0, doubledOnStreams: 0, failures: 0 };
  for (const c of conversations) {
    const rows = rowsOf.all({ id: c.id });
    const stored = new Set(rows.map((r) => r.text));
    tally.sent += c.sent.length;
    tally.stored += rows.length;
    tally.lost += c.sent.filter((text) => !stored.has(text)).length;
    tally.doubledInDb += rows.length - stored.size + rows.filter((r) => !c.sent.includes(r.text)).length;
    if (rows.some((r, i) => r.idx !== i)) tally.notContiguous += 1;
    tally.failures += c.failures.length;
    const heard = c.players.map(receivedCounts);
    c.sent.forEach((_, idx) => {
      const n = heard[(idx + 1) % 2]?.get(idx) ?? 0;
      if (n === 0) tally.missingOnStreams += 1;
      if (n > 1) tally.doubledOnStreams += n - 1;
    });
  }
  db.close();
  return tally;
}

/** The server killed in the middle of the load and started again; the conversations go on against the new one. */
async function restartCheck(server: { child: ChildProcess }, origin: Origin, conversations: Conversation[]) {
  const latencies: number[] = [];
  const until = performance.now() + 15_000;
  const talking = Promise.all(conversations.map((c) => converse(c, until, THINK_MS, latencies)));
  await sleep(4_000);
  const killedAt = performance.now();
  server.child.kill('SIGKILL');
  await new Promise((resolve) => server.child.once('exit', resolve));
  const again = await startSimarena();
  origin.url = again.origin;
  const backAfterMs = performance.now() - killedAt;
  await talking;
  return { again, backAfterMs, latencies, tally: verify(conversations) };
}

async function main(): Promise<void> {
  console.log(`live relay: ${CONVERSATIONS} conversations (${2 * CONVERSATIONS} participants), think ${THINK_MS} ms, ${WINDOWS} windows of ${SECONDS} s each`);
  console.log(`  load average before: ${load()}`);
  const publicId = seed();
  const simarena = await startSimarena(
    [...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...(SQL_TRACE ? ['--import', join(here, 'support/sql-trace.ts')] : []), ...loopTraceFlags],
    { ...(SQL_TRACE ? { BENCH_SQL_TRACE: SQL_TRACE } : {}), ...loopTraceEnv('simarena') },
  );
  const skeleton = await start(join(here, 'support/relay-skeleton.ts'), [join(dir, 'skeleton.db')], loopTraceEnv('skeleton'), loopTraceFlags);
  const origin: Origin = { url: simarena.origin };
  const real = await simarenaConversations(origin, publicId);
  const bare = skeletonConversations({ url: skeleton.origin });
  console.log(`  ${real.length} conversations matched on the server, ${bare.length} on the skeleton`);
  // A window each first, not counted, so that neither server's figures hold its JIT warm-up and first connections.
  await window(bare, 5);
  await window(real, 5);
  const figures = { simarena: [] as number[], skeleton: [] as number[] };
  const cpu = { simarena: 0, skeleton: 0 };
  for (let w = 0; w < WINDOWS; w++) {
    for (const [name, conversations, pid] of [['skeleton', bare, skeleton.child.pid], ['simarena', real, simarena.child.pid]] as const) {
      if (LOOP_TRACE) await loopTrace(pid, name);
      const before = cpuMsOf(pid);
      const { latencies, clientLoopP99Ms } = await window(conversations, SECONDS);
      cpu[name] += cpuMsOf(pid) - before;
      const trace = LOOP_TRACE ? await loopTrace(pid, name) : null;
      figures[name].push(...latencies);
      line(`${name} ${w + 1}`, latencies, `   client loop delay p99 ${ms(clientLoopP99Ms)}${describeTrace(trace)}`);
    }
  }
  console.log('  delivery latency, send to the partner\'s stream, all windows:');
  line('skeleton', figures.skeleton);
  line('simarena', figures.simarena);
  console.log(`  server CPU per turn: simarena ${(cpu.simarena / figures.simarena.length).toFixed(2)} ms, skeleton ${(cpu.skeleton / figures.skeleton.length).toFixed(2)} ms`);
  const ratio = quantile(figures.simarena, 0.99) / quantile(figures.skeleton, 0.99);
  console.log(`  p99 simarena / skeleton: ${ratio.toFixed(2)} (goal ≤ 1.5); simarena p99 under 150 ms: ${quantile(figures.simarena, 0.99) < 150 ? 'yes' : 'no'}`);
  const rss = rssOf(simarena.child.pid);
  const bareRss = rssOf(skeleton.child.pid);
  console.log(`  server RSS ${rss.rssMb.toFixed(0)} MB (peak ${rss.peakMb.toFixed(0)} MB); skeleton ${bareRss.rssMb.toFixed(0)} MB (peak ${bareRss.peakMb.toFixed(0)} MB)`);
  console.log(`  before the restart: ${JSON.stringify(verify(real))}`);
  for (const c of real.filter((x) => x.failures.length > 0).slice(0, 3)) console.log(`    conversation ${c.id}: ${c.failures.join('; ')}`);
  if (RESTART) {
    const check = await restartCheck(simarena, origin, real);
    console.log(`  SIGKILL and restart: back after ${(check.backAfterMs / 1000).toFixed(1)} s; ${JSON.stringify(check.tally)}`);
    line('restart', check.latencies);
    check.again.child.kill('SIGTERM');
  } else {
    // The profile is written as the process exits: wait for it.
    const exited = new Promise((resolve) => simarena.child.once('exit', resolve));
    simarena.child.kill('SIGTERM');
    await exited;
    const file = PROFILE ? readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile')) : undefined;
    if (file) for (const l of summarizeCpuProfile(join(profileDir, file))) console.log(`  ${l}`);
    if (file && PROFILE_OUT) copyFileSync(join(profileDir, file), PROFILE_OUT);
  }
  skeleton.child.kill('SIGTERM');
  console.log(`  load average after: ${load()}`);
  process.exit(0);
}

await main();
