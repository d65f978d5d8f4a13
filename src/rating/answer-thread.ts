import { Worker } from 'node:worker_threads';
import { createWriteGate, type Db, freeWriteGate, useWriteGate } from '../db/connection.js';
import { answerThreadEntry } from './answer-thread-entry.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { AnswerStep } from './answer-and-lease.js';
import type { RaterRow } from './rating.queries.js';
import type { JudgmentInput, RecordOutcome } from './record-judgment.js';
import type { ThreadWriteArgs, ThreadWriteName, ThreadWriteResult } from './thread-writes.js';

export type AnswerRequest = { kind: 'answer'; id: number; rater: RaterRow; input: JudgmentInput; now: number };
export type WriteRequest = { kind: 'write'; id: number; name: ThreadWriteName; args: unknown[] };
export type ThrownInThread = { message: string; userFacing: { status: number; code: string } | null };
export type AnswerReply = { id: number; step: AnswerStep } & ({ outcome: RecordOutcome; error?: undefined } | { outcome?: undefined; error: ThrownInThread });
export type WriteReply = { id: number; step?: undefined } & ({ value: unknown; error?: undefined } | { value?: undefined; error: ThrownInThread });

/** What the thread made of one answer: the transaction's outcome, or what it threw (it was then rolled back). */
export type ThreadAnswer = { step: AnswerStep } & ({ outcome: RecordOutcome; error?: undefined } | { outcome?: undefined; error: Error });

/** What the thread made of one of the rater path's other writes (thread-writes.ts): its value, or what it threw. */
export type ThreadWrite<T> = { value: T; error?: undefined } | { value?: undefined; error: Error };

export type AnswerThread = {
  /**
   * Runs an answer's transaction (answer-and-lease.ts) on the thread. Null when the thread gave no reply (it is not
   * running, could not start, or ended before replying): the caller then runs the transaction itself, which is safe
   * whether or not the thread's had committed, since an answer stored once is a duplicate the second time.
   */
  answer(rater: RaterRow, input: JudgmentInput, now: Date): Promise<ThreadAnswer | null>;
  /** One of the rater path's other transactions (thread-writes.ts) on the thread; null as for answer(), and then likewise run by the caller. */
  write<K extends ThreadWriteName>(name: K, args: ThreadWriteArgs<K>): Promise<ThreadWrite<ThreadWriteResult<K>> | null>;
  /** Ends the thread; answers still waiting get null. */
  stop(): Promise<void>;
  /**
   * Ends the running thread as a crash would, without stopping the service: answers waiting get null, the next ones
   * run on the request thread until the thread starts again (after the restart delay).
   */
  interrupt(): Promise<void>;
  /** Whether a thread is running and ready for answers. */
  running(): boolean;
};

/** After the thread failed to start or ended, answers run on the request thread for this long before it is started again. */
const RESTART_DELAY_MS = 5_000;
const YOUNG_GENERATION_MB = 4;
const OLD_GENERATION_MB = 24;

export type AnswerThreadOptions = {
  /** The server's background checkpoints copy the log: the thread's commits leave it to them. */
  checkpointsElsewhere: boolean;
  /** The thread could not start or ended unexpectedly (once per end). */
  onError?: (problem: string) => void;
  restartDelayMs?: number;
  /** The gate `db` already takes around its writes (useWriteGate); without, one is made and `db` made to take it. */
  writeGate?: SharedArrayBuffer;
  /** false: the thread runs the TypeScript sources through tsx instead of a bundle of them (answer-thread-entry.ts). */
  bundled?: boolean;
};

/**
 * Answers' transactions on a thread of their own, with its own connection to the database file (issue 12). Storing an
 * answer and leasing the next comparison is a fifth of the request thread's time under rater load, and the request
 * thread is what limits throughput: the machine has CPU left beside it. The transaction is the same code with the
 * same guarantees as on the request thread (one IMMEDIATE transaction of SQLite; two connections are what two server
 * processes are already); the request thread serves pages meanwhile. Only for a database file: a database in memory is
 * one connection's alone. The thread's connection and `db` take one write gate around their writes (useWriteGate), so
 * that neither sleeps in SQLite's busy handler when it meets the other's transaction.
 */
export function startAnswerThread(db: Db, options: AnswerThreadOptions): AnswerThread {
  const path = db.name;
  const gate = options.writeGate ?? createWriteGate();
  if (!options.writeGate) useWriteGate(db, gate);
  let worker: Worker | null = null;
  /** Whether `worker` said it is ready: answers go to it only then (before, they are stored on the request thread). */
  let ready = false;
  let stopped = false;
  let retryAt = 0;
  let nextId = 0;
  const waiting: Waiting = new Map();
  let entry: URL | null | undefined;

  const ended = (problem: string | null) => {
    worker = null;
    ready = false;
    const delay = options.restartDelayMs ?? RESTART_DELAY_MS;
    retryAt = Date.now() + delay;
    for (const resolve of waiting.values()) resolve(null);
    waiting.clear();
    if (stopped) return;
    if (problem) options.onError?.(problem);
    setTimeout(() => {
      retryAt = 0;
      start();
    }, delay).unref();
  };

  const start = (): void => {
    if (worker || stopped || entry === undefined || Date.now() < retryAt) return;
    let started: Worker;
    try {
      started = spawnThread(entry, { path, gate, checkpointsElsewhere: options.checkpointsElsewhere });
    } catch (error) {
      ended(`could not start the answer thread: ${(error as Error).message}`);
      return;
    }
    started.unref();
    listenForReplies(started, waiting, () => {
      if (worker === started) ready = true;
    });
    started.on('error', (error) => {
      if (worker === started) ended(`the answer thread failed: ${error.message}`);
    });
    started.on('exit', (code) => {
      // A thread ended inside a transaction never freed the gate.
      freeWriteGate(gate);
      if (worker === started) ended(stopped ? null : `the answer thread ended (exit code ${code})`);
    });
    worker = started;
  };

  /**
   * Ends the thread, then frees the gate, then gives answers still waiting null: in that order, since those are then
   * stored on the request thread, whose write would wait at a gate the ended thread still held.
   */
  const endThread = async () => {
    const thread = worker;
    worker = null;
    ready = false;
    // None started meanwhile: ended() says when one may be.
    retryAt = Number.POSITIVE_INFINITY;
    await thread?.terminate();
    freeWriteGate(gate);
    ended(null);
  };

  // Made and started now; until it is ready, answers are stored on the request thread.
  void threadEntry(options).then((made) => {
    entry = made;
    start();
  });
  /** Sends a request to the thread; null at once when none is running and ready. */
  const send: SendToThread = (request) => {
    start();
    const thread = worker;
    if (!thread || !ready) return Promise.resolve(null);
    return new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      thread.postMessage({ ...request, id });
    });
  };
  return {
    ...threadCalls(send),
    async stop() {
      stopped = true;
      await endThread();
    },
    interrupt: endThread,
    running: () => worker !== null && ready,
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type SendToThread = (request: DistributiveOmit<AnswerRequest | WriteRequest, 'id'>) => Promise<AnswerReply | WriteReply | null>;

/** The requests sent to the thread whose reply has not come, by id: each resolves its request's promise. */
type Waiting = Map<number, (reply: AnswerReply | WriteReply | null) => void>;

/** Passes the thread's replies to the requests waiting for them; its first message says it is ready (`onReady`). */
function listenForReplies(thread: Worker, waiting: Waiting, onReady: () => void): void {
  thread.on('message', (reply: AnswerReply | WriteReply | { ready: true }) => {
    if (!('id' in reply)) {
      onReady();
      return;
    }
    const resolve = waiting.get(reply.id);
    waiting.delete(reply.id);
    resolve?.(reply);
  });
}

/** The thread's code: the compiled thread (dist/) or the bundle, or null when it could not be bundled. */
function threadEntry(options: AnswerThreadOptions): Promise<URL | null> {
  return answerThreadEntry(options.bundled ?? true).catch((error: Error) => {
    options.onError?.(`could not bundle the answer thread's code (${error.message}); it registers tsx itself instead`);
    return null;
  });
}

/** A new thread running `entry`, or else the boot file, which registers tsx itself. */
function spawnThread(entry: URL | null, workerData: { path: string; gate: SharedArrayBuffer; checkpointsElsewhere: boolean }): Worker {
  return new Worker(entry ?? new URL('./answer-thread-boot.mjs', import.meta.url), {
    workerData,
    execArgv: [],
    // Its garbage is short-lived and small (an answer's rows, an entry's), and what it keeps is about 10 MB (its
    // code, statements and caches): a young generation of the server's size (16 MB semi-spaces, package.json) is
    // not needed, and left to itself its heap grew to 52 MB under rater load once it ran the entry's writes too.
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: OLD_GENERATION_MB },
  });
}

/** The answers and writes sent to the thread, their replies as the request thread would have had them (made once per thread service). */
function threadCalls(send: SendToThread): Pick<AnswerThread, 'answer' | 'write'> {
  return {
    async answer(rater, input, now) {
      const reply = (await send({ kind: 'answer', rater, input, now: now.getTime() })) as AnswerReply | null;
      if (!reply) return null;
      return reply.error ? { step: reply.step, error: rebuilt(reply.error) } : { step: reply.step, outcome: reply.outcome };
    },
    async write(name, args) {
      const reply = (await send({ kind: 'write', name, args })) as WriteReply | null;
      if (!reply) return null;
      return reply.error ? { error: rebuilt(reply.error) } : { value: reply.value as ThreadWriteResult<typeof name> };
    },
  };
}

/** What the transaction threw, as the request thread would have seen it: a UserFacingError stays one (its status and code kept). */
function rebuilt(thrown: ThrownInThread): Error {
  return thrown.userFacing ? new UserFacingError(thrown.message, thrown.userFacing.status, thrown.userFacing.code) : new Error(thrown.message);
}
