// The answer thread (answer-thread.ts): answers' transactions on a connection of its own, one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { logSizeFollower } from '../db/log-size.js';
import { openDatabase, useWriteGate } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { type AnswerStep, answerAndLease } from './answer-and-lease.js';
import type { AnswerReply, AnswerRequest } from './answer-thread.js';

const { path, gate, checkpointsElsewhere } = workerData as { path: string; gate: SharedArrayBuffer; checkpointsElsewhere: boolean };
const LOG_FOLLOW_MS = 200;
const db = openDatabase(path);
useWriteGate(db, gate);
// The server's background checkpoints copy the log (src/db/background-checkpoint.ts): this connection's commits do
// not; but they are most of the commits after which the log starts over, so they cut it back as the server's do.
if (checkpointsElsewhere) {
  db.pragma('wal_autocheckpoint = 0');
  const followLogDown = logSizeFollower(db);
  followLogDown();
  setInterval(followLogDown, LOG_FOLLOW_MS).unref();
}

parentPort?.on('message', (request: AnswerRequest) => {
  const step: AnswerStep = { leasing: false, answered: undefined, next: null };
  let reply: AnswerReply;
  try {
    const outcome = answerAndLease(db).immediate(request.rater, request.input, new Date(request.now), Math.random, step);
    reply = { id: request.id, outcome, step };
  } catch (error) {
    const userFacing = error instanceof UserFacingError ? { status: error.status, code: error.code } : null;
    reply = { id: request.id, step, error: { message: error instanceof Error ? error.message : String(error), userFacing } };
  }
  parentPort?.postMessage(reply);
});
parentPort?.postMessage({ ready: true });
