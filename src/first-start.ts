import { type Config, ConfigError } from './config.js';
import { passwordProblem } from './auth/password-policy.js';
import type { Db } from './db/connection.js';
import { hashPassword, randomPassword } from './auth/password.js';
import { countAdmins, findUserByEmail, insertUser } from './auth/user.queries.js';
import { recordAudit } from './audit/audit.queries.js';
import { markAdminPasswordUnshown } from './auth/unshown-password.queries.js';
import { ensureDemoBatch, pauseDemoForResearch, researchWorkIn } from './batches/demo-batch.js';
import { DEMO_RUN_NAME, seedDemoDialogues } from './demo/seed-demo.js';
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
  if (config.seedDemo) seedDemo(db, report, now);
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
    const passwordHash = await hashPassword(password);
    // Marked unshown with the account, until the banner has printed it: a start that stops in between says so next time.
    db.transaction(() => {
      insertUser(db, { email, passwordHash, role: 'admin' }, now);
      markAdminPasswordUnshown(db, email);
    })();
    report.admin = { email, generatedPassword: password };
  }
  if (report.admin) recordAudit(db, { actor: 'system', action: 'user.create', targetType: 'user', targetId: report.admin.email }, now);
  return report;
}

/**
 * The demo dialogues and its open batch, on a database without a researcher's work. A database that holds one gets no
 * demo (none seeded), or its demo batch paused once, said in the start's one log line.
 */
function seedDemo(db: Db, report: FirstStartReport, now: Date): void {
  const work = researchWorkIn(db);
  const demoThere = db.prepare('SELECT 1 FROM runs WHERE name = :name').get({ name: DEMO_RUN_NAME }) !== undefined;
  if (work && !demoThere) {
    report.demoSkipped = `demo not seeded: this database already holds a researcher's work (${work}); the demo stays out of it`;
    return;
  }
  if (work) {
    if (pauseDemoForResearch(db, now)) report.demoSkipped = `demo batch paused: this database now holds a researcher's work (${work}); open it again in the console to keep showing it`;
    return;
  }
  const seeded = seedDemoDialogues(db, now);
  report.demoSeeded = seeded !== null && 'runId' in seeded;
  report.demoSkipped = seeded !== null && 'skipped' in seeded ? seeded.skipped : null;
  ensureDemoBatch(db, now);
}
