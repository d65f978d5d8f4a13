// A thread of the write-gate test: its own connection, with the gate or without, holds a write transaction for the
// time it is told, saying when it holds it.
import { parentPort, workerData } from 'node:worker_threads';

const { register } = await import('tsx/esm/api');
register();
const { openDatabase, useWriteGate } = await import('../../src/db/connection.ts');

const db = openDatabase(workerData.path);
db.pragma('busy_timeout = 0');
if (workerData.gate) useWriteGate(db, workerData.gate);
const insert = db.prepare('INSERT INTO notes (who) VALUES (?)');
parentPort.on('message', (holdMs) => {
  db.transaction(() => {
    insert.run('thread');
    parentPort.postMessage('holding');
    const until = Date.now() + holdMs;
    while (Date.now() < until);
  }).immediate();
  parentPort.postMessage('done');
});
parentPort.postMessage('ready');
