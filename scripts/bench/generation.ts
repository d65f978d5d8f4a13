// Generation overhead against the test suite's local OpenAI-compatible server (test/helpers/fake-llm.ts).
//   npx tsx scripts/bench/generation.ts
// 1. Pool use: concurrency 32, every call takes 200 ms at the server. Ideal throughput is 32 / 0.2 s = 160 calls/s;
//    the engine must keep at least 90% of the pool busy.
// 2. Per-call overhead in our code: the same calls one at a time with no server latency, the engine (prompt
//    building, hashing, validation, SQLite writes, provenance) against bare SDK calls sending the very requests the
//    engine sent, in the same process.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { createRun } from '../../src/generation/create-run.js';
import { executeRun } from '../../src/generation/execute-run.js';
import { type ChatRequest, type LlmClient, createLlmClient } from '../../src/generation/llm-client.js';
import { installLibrary } from '../../src/scenarios/load-library.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { benchDir } from './support/bench-dir.js';

const dir = benchDir('simarena-bench-');

function freshDb(name: string, scenarios: number) {
  const db = openDatabase(join(dir, `${name}.db`));
  migrate(db);
  const character = (id: string, first: string) => ({
    id, firstName: first, lastName: 'Bench', age: 40, gender: 'Woman', pronouns: 'she/her', occupation: 'Engineer',
    publicInfo: 'Lives in town.', personalityAndValues: 'Calm.', decisionMakingStyle: 'Analytical', secret: 'A secret.',
    bigFive: '', moralValues: [], schwartzValues: [],
  });
  installLibrary(
    db,
    {
      characters: [character('a-bench', 'Alma'), character('b-bench', 'Bea')],
      scenarios: Array.from({ length: scenarios }, (_, i) => ({
        id: `bench-${i}`, title: `Bench ${i}`, category: 'mixed' as const, context: `Scenario number ${i}: two neighbours talk.`,
        relationship: 'friend' as const, goals: ['Borrow a ladder.', 'Keep the ladder.'] as [string, string], casts: [['a-bench', 'b-bench']] as [string, string][],
      })),
    },
    'bench',
    new Date().toISOString(),
  );
  return db;
}

/**
 * An LlmClient that answers at once without HTTP: isolates the engine's own work per call (prompt building,
 * hashing, validation, SQLite writes, provenance) from the SDK and the network. Benchmark instrument only.
 */
function instantClient(baseUrl: string): LlmClient {
  let n = 0;
  return {
    baseUrl,
    complete: async () => {
      n += 1;
      const content = JSON.stringify({ action: 'speak', text: `Reply ${n}.` });
      const body = { id: `x${n}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 700, completion_tokens: 12 } };
      return { status: 'ok', httpStatus: 200, body, content, promptTokens: 700, completionTokens: 12 };
    },
  };
}

async function enginePass(baseUrl: string, options: { scenarios: number; turns: number; concurrency: number; instant?: boolean }) {
  const db = freshDb(`engine-${options.concurrency}-${options.turns}`, options.scenarios);
  const runId = createRun(db, { scenarios: 'all', modes: ['agents'], model: 'bench', baseUrl, maxTurns: options.turns, concurrency: options.concurrency }, new Date());
  // Time-weighted: each count of calls in flight holds from one progress event to the next.
  let busyMs = 0;
  let lastInFlight = 0;
  let lastAt = performance.now();
  const cpu = process.cpuUsage();
  const started = performance.now();
  lastAt = started;
  const outcome = await executeRun(db, runId, {
    llm: options.instant ? instantClient(baseUrl) : createLlmClient({ baseUrl, apiKey: 'bench' }),
    onProgress: (p) => {
      const at = performance.now();
      busyMs += lastInFlight * (at - lastAt);
      lastInFlight = p.inFlight;
      lastAt = at;
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = cpuMsSince(cpu);
  // The requests the engine sent, so that the bare SDK pass sends exactly the same bodies (same sizes for the
  // server to read and answer), and the difference is our code alone.
  const requests = (db.prepare('SELECT request FROM llm_calls WHERE run_id = ? ORDER BY id').pluck().all(runId) as string[]).map(
    (r) => JSON.parse(r) as ChatRequest,
  );
  db.close();
  if (outcome.state !== 'complete' || outcome.failed > 0) throw new Error(`bench run ended ${outcome.state}: ${outcome.error}`);
  return { seconds, cpuMs, calls: requests.length, requests, meanInFlight: busyMs / Math.max(1, lastAt - started) };
}

async function sdkPass(baseUrl: string, requests: ChatRequest[], concurrency: number) {
  const llm = createLlmClient({ baseUrl, apiKey: 'bench' });
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) await llm.complete(requests[next++] as ChatRequest, { timeoutMs: 30_000 });
    }),
  );
  return { seconds: (performance.now() - started) / 1000, cpuMs: cpuMsSince(cpu) };
}

/** CPU time of this process (user + system) since `from`: unlike wall time, it does not count waiting. */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}

const latencyMs = 200;
const concurrency = 32;
/** The fake server in its own process (scripts/bench/support/fake-llm-server.ts). */
async function startServer(latency: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./support/fake-llm-server.ts', import.meta.url).pathname, String(latency)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { baseUrl: firstLine.trim(), close: async () => void child.kill('SIGTERM') };
}

const slow = await startServer(latencyMs);
const fast = await startServer(0);
try {
  // Warm-up (module loading, JIT, connection pools) so that neither pass pays for it.
  const warm = await enginePass(fast.baseUrl, { scenarios: 5, turns: 4, concurrency: 4 });
  await sdkPass(fast.baseUrl, warm.requests, 4);

  const pool = await enginePass(slow.baseUrl, { scenarios: 96, turns: 5, concurrency });
  const ideal = concurrency / (latencyMs / 1000);
  const throughput = pool.calls / pool.seconds;
  const sdkPoolSeconds = (await sdkPass(slow.baseUrl, pool.requests, concurrency)).seconds;

  const serial = await enginePass(fast.baseUrl, { scenarios: 40, turns: 10, concurrency: 1 });
  const sdkSerial = await sdkPass(fast.baseUrl, serial.requests, 1);
  const sdkSerialSeconds = sdkSerial.seconds;
  const overheadMs = ((serial.seconds - sdkSerialSeconds) * 1000) / serial.calls;
  const overheadCpuMs = (serial.cpuMs - sdkSerial.cpuMs) / serial.calls;
  const instant = await enginePass('http://instant.invalid/v1', { scenarios: 40, turns: 10, concurrency: 1, instant: true });

  console.log(`generation bench (local fake server, ${latencyMs} ms per call, concurrency ${concurrency})`);
  console.log(`  pool: ${pool.calls} calls in ${pool.seconds.toFixed(2)} s = ${throughput.toFixed(1)} calls/s; ideal ${ideal.toFixed(1)} calls/s`);
  console.log(`  pool busy: ${((100 * throughput) / ideal).toFixed(1)}% of ideal (target >= 90%); mean calls in flight (time-weighted) ${pool.meanInFlight.toFixed(1)} of ${concurrency}`);
  console.log(`  bare SDK, same calls and pool: ${(pool.calls / sdkPoolSeconds).toFixed(1)} calls/s; engine/SDK ratio ${(sdkPoolSeconds / pool.seconds).toFixed(3)}`);
  console.log(`  serial, no latency: engine ${((serial.seconds * 1000) / serial.calls).toFixed(2)} ms/call, bare SDK ${((sdkSerialSeconds * 1000) / serial.calls).toFixed(2)} ms/call`);
  console.log(`  per-call overhead in our code: ${overheadMs.toFixed(2)} ms wall, ${overheadCpuMs.toFixed(2)} ms CPU (target < 5 ms); ratio engine/SDK ${(serial.seconds / sdkSerialSeconds).toFixed(2)}`);
  console.log(`  engine alone (instant in-process client, no HTTP): ${((instant.seconds * 1000) / instant.calls).toFixed(2)} ms/call wall, ${(instant.cpuMs / instant.calls).toFixed(2)} ms/call CPU`);
  console.log(`  (load average ${(await import('node:os')).loadavg()[0]?.toFixed(2)} on ${(await import('node:os')).cpus().length} CPU(s): other work on the machine lowers these figures)`);
} finally {
  await slow.close();
  await fast.close();
  rmSync(dir, { recursive: true, force: true });
}
