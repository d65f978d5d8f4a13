import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import type { Db } from '../db/connection.js';
import { hashPassword, verifyPassword } from './password.js';
import type { SessionUser } from './session-user.js';
import { findUserByEmail, findUserById } from './user.queries.js';

export type CredentialCheck = (email: string, password: string) => Promise<SessionUser | null>;

/** Checks an email and password; the check returns the user, or null for any mismatch (the caller says only "wrong"). */
export function credentialChecker(db: Db): CredentialCheck {
  // A hash verified against when the email is unknown, so that a login attempt for an unknown account costs
  // the same scrypt work as one for a real account (no user enumeration by timing).
  let decoyHash: Promise<string> | undefined;
  return async (email, password) => {
    const user = findUserByEmail(db, email.trim());
    if (!user) {
      decoyHash ??= hashPassword('decoy-password-never-valid');
      await verifyPassword(password, await decoyHash);
      return null;
    }
    const ok = await verifyPassword(password, user.password_hash);
    if (!ok || user.disabled) return null;
    return { id: user.id, email: user.email, role: user.role, via: 'session' };
  };
}

/**
 * A passport instance of the app's own (no module-level singleton): the local strategy, and sessions that store
 * only the user id and re-read the user on every request, so a role change or a disabled account takes effect at once.
 */
export function createPassport(db: Db): passport.Authenticator {
  const instance = new passport.Authenticator();
  const checkCredentials = credentialChecker(db);
  instance.use(
    new LocalStrategy({ usernameField: 'email', passwordField: 'password' }, (email, password, done) => {
      checkCredentials(email, password).then(
        (user) => done(null, user ?? false),
        (error: unknown) => done(error),
      );
    }),
  );
  instance.serializeUser((user, done) => done(null, (user as SessionUser).id));
  instance.deserializeUser((id: unknown, done) => {
    const user = typeof id === 'number' ? findUserById(db, id) : undefined;
    if (!user || user.disabled) {
      done(null, false);
      return;
    }
    const sessionUser: SessionUser = { id: user.id, email: user.email, role: user.role, via: 'session' };
    done(null, sessionUser);
  });
  return instance;
}
