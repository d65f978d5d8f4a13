// The answer thread (answer-thread.ts): answers' transactions on a connection of its own, one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { type AnswerStep, answerAndLease } from './answer-and-lease.js';
import type { AnswerReply, AnswerRequest } from './answer-thread.js';

const { path, checkpointsElsewhere } = workerData as { path: string; checkpointsElsewhere: boolean };
const db = openDatabase(path);
// The server's background checkpoints copy the log (src/db/background-checkpoint.ts): this connection's commits do not.
if (checkpointsElsewhere) db.pragma('wal_autocheckpoint = 0');

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
