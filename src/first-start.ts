import { type Config, ConfigError } from './config.js';
import { passwordProblem } from './auth/password-policy.js';
import type { Db } from './db/connection.js';
import { hashPassword, randomPassword } from './auth/password.js';
import { countAdmins, findUserByEmail, insertUser } from './auth/user.queries.js';
import { recordAudit } from './audit/audit.queries.js';
import { seedDemoDialogues } from './demo/seed-demo.js';
import { ensureDemoBatch } from './batches/demo-batch.js';
import { ensureBuiltInLibrary } from './scenarios/builtin-library.js';

export type FirstStartReport = {
  scenariosLoaded: number;
  demoSeeded: boolean;
  /** Why the demo was not seeded, for one log line (null when seeded or already there). */
  demoSkipped: string | null;
  admin: { email: string; generatedPassword: string | null } | null;
};

/**
 * On every start: load what is new of the built-in scenarios, seed the demo, and make the first admin.
 * Each step checks its own state, so running it on every start is harmless.
 */
export async function prepareFirstStart(db: Db, config: Config, now: Date): Promise<FirstStartReport> {
  const report: FirstStartReport = { scenariosLoaded: 0, demoSeeded: false, demoSkipped: null, admin: null };
  report.scenariosLoaded = ensureBuiltInLibrary(db, now).scenarios;
  if (config.seedDemo) {
    const seeded = seedDemoDialogues(db, now);
    report.demoSeeded = seeded !== null && 'runId' in seeded;
    report.demoSkipped = seeded !== null && 'skipped' in seeded ? seeded.skipped : null;
    ensureDemoBatch(db, now);
  }
  // ADMIN_PASSWORD alone names the password of the default admin@localhost account (docs/reference/configuration.md).
  const adminEmail = config.adminEmail ?? (config.adminPassword ? 'admin@localhost' : undefined);
  if (adminEmail && config.adminPassword && !findUserByEmail(db, adminEmail)) {
    const problem = passwordProblem(config.adminPassword, 'admin', adminEmail);
    if (problem) throw new ConfigError(`Invalid environment variable ADMIN_PASSWORD: ${problem}`);
    insertUser(db, { email: adminEmail, passwordHash: await hashPassword(config.adminPassword), role: 'admin' }, now);
    report.admin = { email: adminEmail, generatedPassword: null };
  } else if (countAdmins(db) === 0) {
    const email = config.adminEmail ?? 'admin@localhost';
    const password = randomPassword();
    insertUser(db, { email, passwordHash: await hashPassword(password), role: 'admin' }, now);
    report.admin = { email, generatedPassword: password };
  }
  if (report.admin) recordAudit(db, { actor: 'system', action: 'user.create', targetType: 'user', targetId: report.admin.email }, now);
  return report;
}
