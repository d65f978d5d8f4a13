// The stack's own ceiling for the live-relay benchmark: Express 5 on node:http, a server-sent-events stream per
// participant and a form POST per turn that inserts one row into SQLite (WAL, as the server's database) and writes the
// event to the partner's stream. Nothing of simarena's relay: no tokens, lobby, turn order, clocks or validation.
// Prints "listening <port>" on stdout.
//   npx tsx scripts/bench/support/relay-skeleton.ts <database-file>
import Database from 'better-sqlite3';
import express from 'express';
import type { Response } from 'express';

const db = new Database(process.argv[2] ?? ':memory:');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS turns (id INTEGER PRIMARY KEY, conversation INTEGER NOT NULL, idx INTEGER NOT NULL, text TEXT NOT NULL) STRICT');
const insert = db.prepare('INSERT INTO turns (conversation, idx, text) VALUES (:conversation, :idx, :text)');

/** Participant p's partner is p xor 1; conversation p >> 1. */
const streams = new Map<number, Response>();
const app = express();
app.use(express.urlencoded({ extended: false, limit: '16kb' }));

app.get('/events', (req, res) => {
  const p = Number(req.query.p);
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
  res.write('retry: 1000\n\n');
  res.socket?.setNoDelay(true);
  streams.set(p, res);
  req.on('close', () => streams.delete(p));
});

app.post('/turn', (req, res) => {
  const body = req.body as { p?: string; idx?: string; text?: string };
  const p = Number(body.p);
  const idx = Number(body.idx);
  insert.run({ conversation: p >> 1, idx, text: body.text ?? '' });
  streams.get(p ^ 1)?.write(`id: ${idx}\ndata: ${JSON.stringify({ type: 'turn', idx, text: body.text })}\n\n`);
  res.json({ ok: true, idx });
});

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
server.keepAliveTimeout = 75_000;
server.headersTimeout = 80_000;
process.on('SIGTERM', () => {
  for (const res of streams.values()) res.end();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
