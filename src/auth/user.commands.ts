import type { Db } from '../db/connection.js';
import { recordAudit } from '../audit/audit.queries.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { hashPassword, randomPassword, verifyPassword } from './password.js';
import { passwordProblem } from './password-policy.js';
import { countAdmins, findUserByEmail, findUserById, insertUser, type Role, setPasswordHash, setUserDisabled, type UserRow } from './user.queries.js';

// Every write a person may request on accounts, each recorded in the audit log. The console and the CLI
// call these; errors are UserFacingErrors with messages fit for both (the CLI prints the message on one line).

export type NewUser = { email: string; role: Role; password?: string | undefined };

function requireAllowedPassword(password: string, role: Role, email: string): void {
  const problem = passwordProblem(password, role, email);
  if (problem) throw new UserFacingError(`The password ${problem}.`, 400);
}

/** Creates an account; without a password, one is generated and returned (to be shown once). */
export async function addUser(db: Db, input: NewUser, actor: string, now: Date): Promise<{ id: number; password: string | null }> {
  if (findUserByEmail(db, input.email)) throw new UserFacingError(`A user with the email ${input.email} already exists.`, 409);
  if (input.password) requireAllowedPassword(input.password, input.role, input.email);
  const generated = input.password ? null : randomPassword();
  const passwordHash = await hashPassword(input.password ?? generated ?? '');
  const id = db.transaction(() => {
    const userId = insertUser(db, { email: input.email, passwordHash, role: input.role }, now);
    recordAudit(db, { actor, action: 'user.create', targetType: 'user', targetId: input.email, details: { role: input.role } }, now);
    return userId;
  })();
  return { id, password: generated };
}

/**
 * Sets a new password for someone else (admin or CLI); generates one when none is given. Every session the user had
 * stops working at its next request (the session version changes).
 */
export async function resetUserPassword(db: Db, user: UserRow, password: string | undefined, actor: string, now: Date): Promise<string | null> {
  if (password) requireAllowedPassword(password, user.role, user.email);
  const generated = password ? null : randomPassword();
  const passwordHash = await hashPassword(password ?? generated ?? '');
  db.transaction(() => {
    setPasswordHash(db, user.id, passwordHash, now);
    recordAudit(db, { actor, action: 'user.reset-password', targetType: 'user', targetId: user.email }, now);
  })();
  return generated;
}

/**
 * A signed-in person changes their own password, proving they know the current one. Their other sessions stop
 * working; the caller signs the current one in again under a new session id.
 */
export async function changeOwnPassword(db: Db, userId: number, current: string, next: string, now: Date): Promise<void> {
  const user = findUserById(db, userId);
  if (!user || !(await verifyPassword(current, user.password_hash))) throw new UserFacingError('The current password is not correct.', 400);
  requireAllowedPassword(next, user.role, user.email);
  const passwordHash = await hashPassword(next);
  db.transaction(() => {
    setPasswordHash(db, user.id, passwordHash, now);
    recordAudit(db, { actor: user.email, action: 'user.change-password', targetType: 'user', targetId: user.email }, now);
  })();
}

/**
 * Disables or re-enables an account; the last enabled admin cannot be disabled (nobody could get back in).
 * A disabled user's open sessions stop working at their next request (deserialisation checks the flag).
 */
export function setUserEnabled(db: Db, userId: number, enabled: boolean, actor: string, now: Date): void {
  const user = findUserById(db, userId);
  if (!user) throw new UserFacingError('No such user.', 404);
  if (!enabled && user.role === 'admin' && user.disabled === 0 && countAdmins(db) <= 1)
    throw new UserFacingError('This is the last enabled admin; make another admin first.', 409);
  db.transaction(() => {
    setUserDisabled(db, userId, !enabled);
    recordAudit(db, { actor, action: enabled ? 'user.enable' : 'user.disable', targetType: 'user', targetId: user.email }, now);
  })();
}
