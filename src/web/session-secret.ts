import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connection.js';

/** SESSION_SECRET when set; otherwise a random secret made once and kept in the database. */
export function resolveSessionSecret(db: Db, fromEnv: string | undefined): string {
  if (fromEnv) return fromEnv;
  const existing = db.prepare("SELECT value FROM settings WHERE key = 'session_secret'").pluck().get();
  if (typeof existing === 'string') return existing;
  const secret = randomBytes(48).toString('base64url');
  db.prepare("INSERT INTO settings (key, value) VALUES ('session_secret', :secret) ON CONFLICT (key) DO NOTHING").run({ secret });
  return db.prepare("SELECT value FROM settings WHERE key = 'session_secret'").pluck().get() as string;
}
