import session from 'express-session';
import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { JsonColumnError, parseJsonColumn } from '../db/json-column.js';

const DAY_MS = 86_400_000;

/** sessions.data as express-session wrote it: its cookie must be there; the rest (passport's user, flash...) passes. */
const storedSessionSchema = z.looseObject({ cookie: z.looseObject({}) }).transform((data) => data as unknown as session.SessionData);

/** express-session store on the platform's SQLite file, so sessions survive restarts. */
export class SqliteSessionStore extends session.Store {
  private readonly statements;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.statements = {
      get: db.prepare<{ sid: string; now: number }, { data: string }>(
        'SELECT data FROM sessions WHERE sid = :sid AND expires_at > :now',
      ),
      set: db.prepare(
        `INSERT INTO sessions (sid, data, expires_at) VALUES (:sid, :data, :expires)
         ON CONFLICT (sid) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
      ),
      touch: db.prepare('UPDATE sessions SET expires_at = :expires WHERE sid = :sid'),
      destroy: db.prepare('DELETE FROM sessions WHERE sid = :sid'),
    };
  }

  private expiry(data: session.SessionData): number {
    const expires = data.cookie?.expires;
    return expires ? new Date(expires).getTime() : this.now() + DAY_MS;
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    try {
      const row = this.statements.get.get({ sid, now: this.now() });
      callback(null, row ? parseJsonColumn(storedSessionSchema, row.data, 'sessions.data') : null);
    } catch (error) {
      // A damaged session is no session: its holder signs in again (and the row is overwritten), rather than every
      // request with that cookie failing.
      if (error instanceof JsonColumnError) callback(null, null);
      else callback(error);
    }
  }

  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    try {
      this.statements.set.run({ sid, data: JSON.stringify(data), expires: this.expiry(data) });
      callback?.();
    } catch (error) {
      callback?.(error);
    }
  }

  override touch(sid: string, data: session.SessionData, callback?: () => void): void {
    this.statements.touch.run({ sid, expires: this.expiry(data) });
    callback?.();
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    try {
      this.statements.destroy.run({ sid });
      callback?.();
    } catch (error) {
      callback?.(error);
    }
  }
}

/** Deletes expired console sessions (server.ts runs it at start and every hour): the table does not grow forever. */
export function pruneExpiredSessions(db: Db, now: Date): number {
  return db.prepare('DELETE FROM sessions WHERE expires_at <= :now').run({ now: now.getTime() }).changes;
}
