import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/password.js';
import { insertUser } from '../../src/auth/user.queries.js';
import { recordAudit } from '../../src/audit/audit.queries.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrate } from '../../src/db/migrate.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { tempDir } from '../helpers/test-db.js';

const root = new URL('../../', import.meta.url).pathname;

function takenPort(): Promise<{ blocker: Server; port: number }> {
  return new Promise((resolve) => {
    const blocker = createServer();
    blocker.listen(0, '127.0.0.1', () => {
      const address = blocker.address();
      resolve({ blocker, port: typeof address === 'object' && address ? address.port : 0 });
    });
  });
}

function run(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => (output += c));
  child.stderr?.on('data', (c) => (output += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe('npm start, port clash', () => {
  it('npm start, when the port is already taken, exits 1 naming the port, prints no "listening" line and no password, and writes no admin or demo', async () => {
    const { blocker, port } = await takenPort();
    const dbPath = join(tempDir(), 'db.sqlite');
    try {
      const { code, output } = await run({ PORT: String(port), DATABASE_PATH: dbPath });
      expect(code).toBe(1);
      expect(output).toContain(`simarena: port ${port} on 127.0.0.1 is already in use; set PORT to a free port`);
      expect(output).not.toMatch(/listening/i);
      expect(output).not.toContain('Admin account');
      expect(output).not.toContain('Rater link');
      if (existsSync(dbPath)) {
        const db = openDatabase(dbPath);
        try {
          expect(db.prepare('SELECT COUNT(*) FROM users').pluck().get()).toBe(0);
          expect(db.prepare('SELECT COUNT(*) FROM batches').pluck().get()).toBe(0);
          expect(db.prepare('SELECT COUNT(*) FROM runs').pluck().get()).toBe(0);
        } finally {
          db.close();
        }
      }
    } finally {
      blocker.close();
    }
    // The next start on a free port creates the admin and shows its password.
    const { child, output } = await startServer({ DATABASE_PATH: dbPath });
    await stopServer(child);
    expect(output()).toMatch(/Admin account created: admin@localhost \/ \S{12,}/);
  });

  it('npm start, when an admin was created at an earlier start that never showed its password, says how to set one', async () => {
    const dbPath = join(tempDir(), 'db.sqlite');
    const db = openDatabase(dbPath);
    migrate(db);
    const now = new Date('2026-01-01T00:00:00Z');
    insertUser(db, { email: 'lab@example.org', passwordHash: await hashPassword('a-password-nobody-saw'), role: 'admin' }, now);
    db.prepare("INSERT INTO settings (key, value) VALUES ('admin_password_unshown', 'lab@example.org')").run();
    db.close();
    const first = await startServer({ DATABASE_PATH: dbPath, SEED_DEMO: 'false' });
    await stopServer(first.child);
    expect(first.output()).toContain(
      'Admin account lab@example.org was created at an earlier start that stopped before showing its password; set one with: simarena users reset-password --email lab@example.org',
    );
  });

  it('npm start, on a database from before the unshown mark whose first admin never signed in, says how to set a password, and stops saying it once an admin has signed in', async () => {
    const dbPath = join(tempDir(), 'db.sqlite');
    const db = openDatabase(dbPath);
    migrate(db);
    const now = new Date('2026-01-01T00:00:00Z');
    insertUser(db, { email: 'admin@localhost', passwordHash: await hashPassword('a-password-nobody-saw'), role: 'admin' }, now);
    recordAudit(db, { actor: 'system', action: 'user.create', targetType: 'user', targetId: 'admin@localhost' }, now);
    db.close();
    const hint = 'Admin account admin@localhost has never signed in; if you never saw its password, set one with: simarena users reset-password --email admin@localhost';
    const first = await startServer({ DATABASE_PATH: dbPath, SEED_DEMO: 'false' });
    await stopServer(first.child);
    expect(first.output()).toContain(hint);
    const again = openDatabase(dbPath);
    recordAudit(again, { actor: 'admin@localhost', action: 'login', targetType: 'user', targetId: 'admin@localhost' }, now);
    again.close();
    const second = await startServer({ DATABASE_PATH: dbPath, SEED_DEMO: 'false' });
    await stopServer(second.child);
    expect(second.output()).not.toContain('never signed in');
  });
});
