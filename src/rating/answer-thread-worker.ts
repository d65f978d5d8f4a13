// The answer thread (answer-thread.ts): answers' transactions on a connection of its own, one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { logSizeFollower } from '../db/log-size.js';
import { limitPageCache, openDatabase, SERVER_PAGE_CACHE_KIB, useWriteGate } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { type AnswerStep, answerAndLease } from './answer-and-lease.js';
import type { AnswerReply, AnswerRequest, ThrownInThread, WriteReply, WriteRequest } from './answer-thread.js';
import { runThreadWrite, type ThreadWriteArgs, type ThreadWriteName } from './thread-writes.js';

const { path, gate, checkpointsElsewhere } = workerData as { path: string; gate: SharedArrayBuffer; checkpointsElsewhere: boolean };
const LOG_FOLLOW_MS = 200;
const db = openDatabase(path);
limitPageCache(db, SERVER_PAGE_CACHE_KIB);
useWriteGate(db, gate);
// The server's background checkpoints copy the log (src/db/background-checkpoint.ts): this connection's commits do
// not; but they are most of the commits after which the log starts over, so they cut it back as the server's do.
if (checkpointsElsewhere) {
  db.pragma('wal_autocheckpoint = 0');
  const followLogDown = logSizeFollower(db);
  followLogDown();
  setInterval(followLogDown, LOG_FOLLOW_MS).unref();
}

/** What a transaction threw, as text (SQLite's errors lose their message on the way out of a thread). */
const thrown = (error: unknown): ThrownInThread => ({
  message: error instanceof Error ? error.message : String(error),
  userFacing: error instanceof UserFacingError ? { status: error.status, code: error.code } : null,
});

function answer(request: AnswerRequest): AnswerReply {
  const step: AnswerStep = { leasing: false, answered: undefined, next: null };
  try {
    return { id: request.id, outcome: answerAndLease(db).immediate(request.rater, request.input, new Date(request.now), Math.random, step), step };
  } catch (error) {
    return { id: request.id, step, error: thrown(error) };
  }
}

function write(request: WriteRequest): WriteReply {
  try {
    return { id: request.id, value: runThreadWrite(db, request.name, request.args as ThreadWriteArgs<ThreadWriteName>) };
  } catch (error) {
    return { id: request.id, error: thrown(error) };
  }
}

parentPort?.on('message', (request: AnswerRequest | WriteRequest) => {
  parentPort?.postMessage(request.kind === 'write' ? write(request) : answer(request));
});
parentPort?.postMessage({ ready: true });
