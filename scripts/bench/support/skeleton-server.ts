// The stack's own ceiling for the rater-load benchmark: Express 5 + express-session with the platform's SQLite
// session store + one compiled EJS page of two 12-turn dialogues + a form POST that inserts one row and redirects.
// Nothing of simarena's rating logic. Prints "listening <port>" on stdout.
//   npx tsx scripts/bench/support/skeleton-server.ts <database-file>
import Database from 'better-sqlite3';
import ejs from 'ejs';
import express from 'express';
import session from 'express-session';
import { randomBytes } from 'node:crypto';
import { SqliteSessionStore } from '../../../src/web/session-store.js';
import { benchDialogueTurns } from './bench-study.js';

const db = new Database(process.argv[2] ?? ':memory:');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.exec(`
  CREATE TABLE IF NOT EXISTS sessions (sid TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL) STRICT;
  CREATE TABLE IF NOT EXISTS answers (id INTEGER PRIMARY KEY, person TEXT NOT NULL, choice TEXT NOT NULL, at TEXT NOT NULL) STRICT;`);
const insertAnswer = db.prepare('INSERT INTO answers (person, choice, at) VALUES (:person, :choice, :at)');

const page = ejs.compile(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Comparison <%= k %></title></head><body><main>
<h1>Comparison <%= k %></h1>
<% for (const [i, turns] of dialogues.entries()) { %><section><h2>Conversation <%= i + 1 %></h2><ol>
<% for (const t of turns) { %><li class="turn speaker-<%= t.speaker %>"><strong><%= t.speaker === 1 ? 'Alma' : 'Bea' %></strong> <%= t.text %></li><% } %>
</ol></section><% } %>
<form method="post" action="/answer"><input type="hidden" name="token" value="<%= token %>">
<input type="radio" name="choice" value="left" required><input type="radio" name="choice" value="right"><input type="radio" name="choice" value="tie">
<button type="submit">Submit answer</button></form></main></body></html>`);

const dialogues = [benchDialogueTurns(0, 'SCRIPT'), benchDialogueTurns(0, 'AGENTS')];

declare module 'express-session' {
  interface SessionData {
    person: string;
    answered: number;
  }
}

const app = express();
app.use(
  session({
    store: new SqliteSessionStore(db),
    secret: randomBytes(32).toString('hex'),
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax' },
  }),
);
app.use(express.urlencoded({ extended: false, limit: '16kb' }));

app.get('/', (req, res) => {
  req.session.person ??= randomBytes(8).toString('hex');
  res.set('Cache-Control', 'no-store').send(page({ k: (req.session.answered ?? 0) + 1, dialogues, token: req.session.person }));
});

app.post('/answer', (req, res) => {
  const body = req.body as { choice?: string };
  const choice = body.choice === 'left' || body.choice === 'right' || body.choice === 'tie' ? body.choice : null;
  if (!choice || !req.session.person) {
    res.status(400).send('Choose one.');
    return;
  }
  insertAnswer.run({ person: req.session.person, choice, at: new Date().toISOString() });
  req.session.answered = (req.session.answered ?? 0) + 1;
  res.redirect(303, '/');
});

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
// As simarena's server (KEEP_ALIVE_TIMEOUT_SECONDS): paced raters (--think) keep their connection while they read.
server.keepAliveTimeout = 75_000;
server.headersTimeout = 80_000;
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
