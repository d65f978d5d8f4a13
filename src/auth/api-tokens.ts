import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/connection.js';
import { recordAudit } from '../audit/audit.queries.js';
import { HttpError } from '../web/http-error.js';
import { findApiToken, findTokenOwner, insertApiToken, revokeApiTokenRow, touchApiToken } from './api-token.queries.js';
import type { SessionUser } from './session-user.js';
import type { UserRow } from './user.queries.js';

// Secrets look like `sa_<8-char prefix>_<32 random bytes>`; only their sha256 is stored. A fast hash is right
// here (unlike passwords): the secret has 256 bits of entropy, so there is nothing to brute-force.
const SECRET_PATTERN = /^sa_[A-Za-z0-9_-]{8}_[A-Za-z0-9_-]{43}$/;

export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export type CreatedToken = { id: number; name: string; prefix: string; secret: string };

/** Creates a token for a user; the secret is returned once and never stored. */
export function createApiToken(db: Db, user: Pick<UserRow, 'id' | 'email'>, name: string, actor: string, now: Date): CreatedToken {
  const prefix = randomBytes(6).toString('base64url');
  const secret = `sa_${prefix}_${randomBytes(32).toString('base64url')}`;
  const id = db.transaction(() => {
    const tokenId = insertApiToken(db, { userId: user.id, name, tokenHash: hashTokenSecret(secret), prefix }, now);
    recordAudit(db, { actor, action: 'token.create', targetType: 'api_token', targetId: tokenId, details: { user: user.email, name, prefix } }, now);
    return tokenId;
  })();
  return { id, name, prefix, secret };
}

/** Revokes a token; only its owner or an admin may. */
export function revokeApiToken(db: Db, tokenId: number, actor: Pick<SessionUser, 'id' | 'email' | 'role'>, now: Date): void {
  const token = findApiToken(db, tokenId);
  if (!token || (token.user_id !== actor.id && actor.role !== 'admin')) throw new HttpError(404, 'No such token.');
  if (token.revoked_at) return;
  db.transaction(() => {
    revokeApiTokenRow(db, tokenId, now);
    recordAudit(db, { actor: actor.email, action: 'token.revoke', targetType: 'api_token', targetId: tokenId, details: { prefix: token.prefix } }, now);
  })();
}

/** The user a bearer secret belongs to, recording when it was last used; null for unknown or revoked secrets. */
export function authenticateApiToken(db: Db, secret: string, now: Date): SessionUser | null {
  if (!SECRET_PATTERN.test(secret)) return null;
  const owner = findTokenOwner(db, hashTokenSecret(secret));
  if (!owner) return null;
  touchApiToken(db, owner.token_id, now);
  return { id: owner.user_id, email: owner.email, role: owner.role, via: 'token' };
}
