// The thread of src/db/background-checkpoint.ts: its own connection to the database file copies the write-ahead log
// into the file every `intervalMs` and lets the log start over at most every `restartIntervalMs`, never waiting for a
// reader or a writer (see checkpoint() below), until 'stop'.
// Plain JavaScript, so that it runs under any loader the server was started with.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { freeGate, takeGate } from './write-gate.mjs';

const { path, intervalMs, restartIntervalMs, gate } = workerData;
const reasonOf = (error) => (error instanceof Error && error.message ? error.message : String(error?.code ?? error));
let db;
try {
  db = new Database(path, { fileMustExist: true });
} catch (error) {
  // SQLite's errors lose their message on the way out of a thread: it is sent as text.
  parentPort?.postMessage({ kind: 'failed', message: `cannot open ${path}: ${reasonOf(error)}` });
  process.exit(1);
}
// This connection never writes; it must not checkpoint on its own schedule either.
db.pragma('wal_autocheckpoint = 0');
db.pragma('busy_timeout = 0');

// PASSIVE copies what it can without waiting for anyone; under a steady stream of commits that never leaves the log
// wholly copied at the moment a writer starts, and only then does SQLite start the log over, so it would grow without
// end. RESTART then copies the few frames committed meanwhile and lets the next writer start the log over; with no
// busy wait it never blocks: a writer or an old reader (an analysis) just makes it a PASSIVE one, to be tried again.
// But RESTART holds the write lock while it copies and syncs, and every commit meanwhile waits in SQLite's busy
// handler, whose sleeps (1, 2, 5, 10 ms) hold the server's whole request thread; the first commit after a restart also
// syncs the log's new header on that thread. Run after every PASSIVE (5 a second), that was 9 sleeps and 3 syncs a
// second on the request thread under full rater load, and after a long reader (an analysis) it copied under the lock
// the tens of megabytes committed while the PASSIVE before it copied what that reader had held back (issue 12). So it
// runs at most every `restartIntervalMs`, and only after a PASSIVE short enough that what is left to copy under the
// lock is what came in the last few milliseconds: after a long reader, the first PASSIVE copies what it held back
// (hundreds of megabytes, over a second) and more passes follow until one is short.
let lastRestart = -Infinity;
const SHORT_PASS_MS = 50;
const MAX_PASSES = 5;
function checkpoint() {
  let started = performance.now();
  const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
  if (passive.log === 0 || performance.now() - lastRestart < restartIntervalMs) return;
  for (let pass = 1; pass < MAX_PASSES && performance.now() - started > SHORT_PASS_MS; pass++) {
    started = performance.now();
    db.pragma('wal_checkpoint(PASSIVE)');
  }
  const [restart] = withWriteGate(() => db.pragma('wal_checkpoint(RESTART)'));
  // Not busy: it got the write lock and the log starts over at the next commit (reported, so the rate can be checked).
  // Busy: tried again at the next interval, not a whole restart interval later.
  if (restart.busy !== 0) return;
  lastRestart = performance.now();
  parentPort?.postMessage({ kind: 'restarted' });
}

// The server's write gate (src/db/connection.ts, useWriteGate), when it has one: its connections that write side by
// side (the request thread's and the answer thread's) take it around every write, so with it taken no write of theirs
// is under way or starts, and RESTART finds the write lock free (without it, one of their transactions was under way at
// most attempts and the log grew to hundreds of megabytes). Waited for a few milliseconds at most (a transaction's
// length); a RESTART without it is only more likely to be busy.
const GATE_WAIT_MS = 20;
const cell = gate ? new Int32Array(gate) : null;
function withWriteGate(run) {
  const taken = cell !== null && takeGate(cell, GATE_WAIT_MS);
  try {
    return run();
  } finally {
    if (taken) freeGate(cell);
  }
}

// Each failure is posted (the server counts them and warns once per run of failures); the first success after a run
// is posted once, so the server can stop checkpointing on its own commits again.
let failing = false;
const timer = setInterval(() => {
  try {
    checkpoint();
    if (failing) parentPort?.postMessage({ kind: 'recovered' });
    failing = false;
  } catch (error) {
    failing = true;
    parentPort?.postMessage({ kind: 'error', message: reasonOf(error) });
  }
}, intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
checkpoint();
parentPort?.postMessage({ kind: 'ready' });
