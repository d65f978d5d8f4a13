import type { Db } from '../db/connection.js';
import { findUserByEmail } from './user.queries.js';

// The first admin's generated password is shown once, in the start's banner. A start that stops before its banner
// (or a database from before the port was bound first) leaves an admin nobody can sign in as: the next start says so.
const UNSHOWN_PASSWORD = 'admin_password_unshown';

/** Marks the generated password of the admin just created as not yet shown (in the transaction that creates it). */
export function markAdminPasswordUnshown(db: Db, email: string): void {
  db.prepare('INSERT INTO settings (key, value) VALUES (:key, :email) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run({ key: UNSHOWN_PASSWORD, email });
}

/** Called once the banner has printed the generated admin password. */
export function markAdminPasswordShown(db: Db): void {
  db.prepare('DELETE FROM settings WHERE key = :key').run({ key: UNSHOWN_PASSWORD });
}

/**
 * The admin whose generated password an earlier start made but never printed, while nobody has set a password for
 * that account since; null otherwise.
 */
export function adminWithUnshownPassword(db: Db): string | null {
  const email = db.prepare<{ key: string }, string>('SELECT value FROM settings WHERE key = :key').pluck().get({ key: UNSHOWN_PASSWORD });
  if (email === undefined) return null;
  const user = findUserByEmail(db, email);
  return user && user.password_changed_at === null ? user.email : null;
}

/**
 * An admin the first start made (actor "system") whose password nobody has set since, while no admin has ever signed
 * in: on a database from before the unshown mark, the one sign that its generated password may never have been seen.
 */
export function firstAdminNeverSignedIn(db: Db): string | null {
  const email = db
    .prepare<[], string>(
      `SELECT u.email FROM users u
        WHERE u.role = 'admin' AND u.disabled = 0 AND u.password_changed_at IS NULL
          AND EXISTS (SELECT 1 FROM audit_log a WHERE a.action = 'user.create' AND a.actor = 'system' AND a.target_id = u.email)
          AND NOT EXISTS (SELECT 1 FROM audit_log a JOIN users v ON v.email = a.target_id WHERE a.action = 'login' AND v.role = 'admin')
        ORDER BY u.id LIMIT 1`,
    )
    .pluck()
    .get();
  return email ?? null;
}
