import type { Db } from '../db/connection.js';
import type { Role } from './user.queries.js';

export type ApiTokenRow = {
  id: number;
  user_id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
};

const TOKEN_COLUMNS = 'id, user_id, name, prefix, created_at, last_used_at, revoked_at';

export function insertApiToken(db: Db, token: { userId: number; name: string; tokenHash: string; prefix: string }, now: Date): number {
  return Number(
    db
      .prepare('INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at) VALUES (:userId, :name, :tokenHash, :prefix, :now)')
      .run({ ...token, now: now.toISOString() }).lastInsertRowid,
  );
}

export function listApiTokens(db: Db, userId: number): ApiTokenRow[] {
  return db
    .prepare<{ userId: number }, ApiTokenRow>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE user_id = :userId ORDER BY id DESC`)
    .all({ userId });
}

export function findApiToken(db: Db, id: number): ApiTokenRow | undefined {
  return db.prepare<{ id: number }, ApiTokenRow>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = :id`).get({ id });
}

export type TokenOwner = { token_id: number; user_id: number; email: string; role: Role };

/** The live token with this hash and its enabled owner. */
export function findTokenOwner(db: Db, tokenHash: string): TokenOwner | undefined {
  return db
    .prepare<{ tokenHash: string }, TokenOwner>(
      `SELECT t.id AS token_id, u.id AS user_id, u.email, u.role
       FROM api_tokens t JOIN users u ON u.id = t.user_id
       WHERE t.token_hash = :tokenHash AND t.revoked_at IS NULL AND u.disabled = 0`,
    )
    .get({ tokenHash });
}

export function touchApiToken(db: Db, id: number, now: Date): void {
  db.prepare('UPDATE api_tokens SET last_used_at = :now WHERE id = :id').run({ id, now: now.toISOString() });
}

export function revokeApiTokenRow(db: Db, id: number, now: Date): boolean {
  return db.prepare('UPDATE api_tokens SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL').run({ id, now: now.toISOString() }).changes > 0;
}
