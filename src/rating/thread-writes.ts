import type { Db } from '../db/connection.js';
import { type AssignOutcome, assignNextPair } from './assign-next-pair.js';
import { completeRater, finishInstructions } from './rater-flow.js';
import { admitRater, decideEntry } from './rater-pool.js';
import { markAssignmentViewed } from './rating.queries.js';

// The rater path's other transactions that the answer thread runs when the server has one (issue 12): an entry's
// decision, the admission at consent, the end of the instructions, the lease of GET /next, the first view of a
// comparison it leased and the end of a session.
// On the request thread each took the write gate (src/db/connection.ts), and waited there, holding every request, while
// the answer thread or the checkpoint thread held it: 6% of the request thread's time under rater load, in waits of up
// to 18 ms. On the answer thread they wait there instead, one at a time with the answers, and the request thread serves
// pages meanwhile. Each is the same function, with the same transaction, as on the request thread; each can run again
// there if the thread ends before replying (a second admission of the same entry finds the rater the first made, a
// second lease the lease the first took, a second end a rater already done).

export const threadWrites = {
  decideEntry,
  admitRater,
  finishInstructions,
  completeRater,
  markAssignmentViewed,
  /** The thread's own random numbers choose the sides: the request thread's `random` cannot be sent to it. */
  assignNextPair: (db: Db, raterId: number, now: Date, redirecting: boolean): AssignOutcome => assignNextPair(db, raterId, { now, random: Math.random, redirecting }),
};

export type ThreadWriteName = keyof typeof threadWrites;
/** A write's arguments after the database handle: plain data, sent to the thread by structured clone. */
export type ThreadWriteArgs<K extends ThreadWriteName> = (typeof threadWrites)[K] extends (db: Db, ...args: infer A) => unknown ? A : never;
export type ThreadWriteResult<K extends ThreadWriteName> = ReturnType<(typeof threadWrites)[K]>;

/** Runs a write on this thread's handle (the answer thread, or the request thread when it has none). */
export function runThreadWrite<K extends ThreadWriteName>(db: Db, name: K, args: ThreadWriteArgs<K>): ThreadWriteResult<K> {
  const write = threadWrites[name] as unknown as (db: Db, ...args: ThreadWriteArgs<K>) => ThreadWriteResult<K>;
  return write(db, ...args);
}
