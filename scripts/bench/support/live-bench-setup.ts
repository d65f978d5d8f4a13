// The live-relay benchmark's setup (scripts/bench/live-relay.ts): its servers, the role-play batch, participants who
// enter through the real pages, and the conversations of the real server and of the skeleton.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { transitionBatch } from '../../../src/batches/batch.commands.js';
import { createBatch } from '../../../src/batches/create-batch.js';
import { openDatabase } from '../../../src/db/connection.js';
import { migrate } from '../../../src/db/migrate.js';
import { makeScenario } from '../../../test/helpers/factories.js';
import { benchDir } from './bench-dir.js';
import { type Conversation, converse, get, type Origin, openStream, type Participant, post } from './live-clients.js';
import { numberFlag } from './number-flag.js';

export const CONVERSATIONS = numberFlag('--conversations', 200);
export const THINK_MS = numberFlag('--think', 1000);
const root = new URL('../../../', import.meta.url).pathname;
export const dir = benchDir('simarena-live-relay-');
export const dbPath = join(dir, 'simarena.db');

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
export const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : (s[Math.min(s.length - 1, Math.floor(q * s.length))] as number);
};
export const ms = (x: number) => (Number.isNaN(x) ? '–' : `${x.toFixed(1)} ms`);
export const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

export function memoryFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).filter((word) => /^--(max-[a-z-]+|v8-pool-size)=\d+$/.test(word));
}

export async function start(script: string, args: string[], env: Record<string, string>, nodeFlags: string[] = []): Promise<{ origin: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...memoryFlags(), ...nodeFlags, script, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start within 60 s`)), 60_000);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line) ?? /^listening (\d+)/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      resolve(m[1]?.startsWith('http') ? (m[1] as string) : `http://127.0.0.1:${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return { origin, child };
}

export const startSimarena = (nodeFlags: string[] = [], env: Record<string, string> = {}) =>
  start(join(root, 'src/server.ts'), [], { PORT: '0', DATABASE_PATH: dbPath, SEED_DEMO: 'false', LOG_LEVEL: 'warn', SESSION_SECRET: 'live-relay-bench-session-secret-0123456789abcdef', ...env }, nodeFlags);

/** CPU time (user + system) a process has used so far, in milliseconds (/proc/<pid>/stat, clock ticks of 10 ms). */
export function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export function rssOf(pid: number | undefined): { rssMb: number; peakMb: number } {
  const status = pid === undefined ? '' : readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** An open role-play batch on one scenario: no wait or turn runs out during the run, and one address may take every place. */
export function seed(): string {
  const db = openDatabase(dbPath);
  migrate(db);
  makeScenario(db);
  const now = new Date();
  const settings = {
    name: 'Live relay bench', task: 'roleplay', run: 'bench-live', consent: 'Bench.', instructions: 'Bench.', pay: '£1.00',
    addressLimits: { ratersPerWindow: 10_000, windowMinutes: 60, activeRaters: 10_000 },
    partner: { waitSeconds: 3600, awaySeconds: 120, sameAddress: true },
    turns: { max: 100, min: 2, turnSeconds: 900 },
  };
  const created = createBatch(db, settings, { actor: 'bench', now });
  transitionBatch(db, created.batchId, 'open', 'bench', now);
  const publicId = db.prepare('SELECT public_id FROM batches WHERE id = ?').pluck().get(created.batchId) as string;
  db.close();
  return publicId;
}

/** One participant through the link, consent and instructions into the lobby: their rater token and form token. */
export async function enter(origin: Origin, publicId: string): Promise<{ rt: string; csrf: string }> {
  const consent = (await get(`${origin.url}/r/${publicId}`)).text;
  const agreed = await post(`${origin.url}/r/${publicId}/live/consent`, { et: hidden(consent, 'et'), _csrf: hidden(consent, '_csrf'), decision: 'agree' });
  const instructions = (await get(`${origin.url}${agreed?.location ?? ''}`)).text;
  const rt = hidden(instructions, 'rt');
  const csrf = hidden(instructions, '_csrf');
  await post(`${origin.url}/r/${publicId}/live/instructions`, { rt, _csrf: csrf });
  return { rt, csrf };
}

/** The conversations of the real server: 2N participants enter, open their streams, are matched two by two. */
export async function simarenaConversations(origin: Origin, publicId: string): Promise<Conversation[]> {
  const people: { rt: string; csrf: string; p: Participant }[] = [];
  for (let i = 0; i < 2 * CONVERSATIONS; i += 8) {
    const batch = await Promise.all(Array.from({ length: Math.min(8, 2 * CONVERSATIONS - i) }, () => enter(origin, publicId)));
    for (const { rt, csrf } of batch) {
      const p: Participant = {
        streamUrl: () => `${origin.url}/r/${publicId}/live/events?rt=${encodeURIComponent(rt)}&after=-1`,
        turn: (_idx, text, key) => ({ url: `${origin.url}/r/${publicId}/live/turn`, fields: { rt, _csrf: csrf, key, action: 'speak', text } }),
        streams: [],
        lastIdx: -1,
      };
      openStream(p);
      people.push({ rt, csrf, p });
    }
  }
  await Promise.all(people.map(({ p }) => p.streams[0]?.next((d) => d.type === 'go', 120_000)));
  // Who plays which character of which dialogue: read from the database (the pages say it too, one GET each).
  const db = openDatabase(dbPath);
  const seats = db.prepare<[], { public_id: string; dialogue_id: number; character: 1 | 2 }>('SELECT r.public_id, p.dialogue_id, p.character FROM live_players p JOIN raters r ON r.id = p.rater_id').all();
  db.close();
  const byDialogue = new Map<number, Participant[]>();
  for (const seat of seats) {
    const person = people.find((x) => x.rt.startsWith(`${seat.public_id}.`));
    if (!person) continue;
    const pair = byDialogue.get(seat.dialogue_id) ?? [];
    pair[seat.character - 1] = person.p;
    byDialogue.set(seat.dialogue_id, pair);
  }
  return [...byDialogue].map(([id, pair]) => ({ id, players: pair as [Participant, Participant], idx: 0, sent: [], failures: [] }));
}

/** The skeleton's conversations: participant 2c and 2c+1 talk. */
export function skeletonConversations(origin: Origin): Conversation[] {
  return Array.from({ length: CONVERSATIONS }, (_, c) => {
    const player = (p: number): Participant => {
      const made: Participant = {
        streamUrl: () => `${origin.url}/events?p=${p}`,
        turn: (idx, text) => ({ url: `${origin.url}/turn`, fields: { p: String(p), idx: String(idx), text } }),
        streams: [],
        lastIdx: -1,
      };
      openStream(made);
      return made;
    };
    return { id: c, players: [player(2 * c), player(2 * c + 1)], idx: 0, sent: [], failures: [] };
  });
}

/**
 * Every conversation talks for `seconds`; the latencies of the turns delivered meanwhile, and the p99 of this (the
 * client's) event-loop delay, which says whether a tail is the servers' or the load generator's own.
 */
export async function window(conversations: Conversation[], seconds: number): Promise<{ latencies: number[]; clientLoopP99Ms: number }> {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  await Promise.all(conversations.map((c) => converse(c, until, THINK_MS, latencies)));
  loop.disable();
  return { latencies, clientLoopP99Ms: loop.percentile(99) / 1e6 };
}
