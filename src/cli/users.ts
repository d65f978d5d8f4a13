import type { Command } from 'commander';
import type { z } from 'zod';
import { lookupEmailSchema, newUserSchema, passwordSchema } from '../auth/auth.schema.js';
import { addUser, resetUserPassword, setUserEnabled } from '../auth/user.commands.js';
import { findUserByEmail, listUsers } from '../auth/user.queries.js';
import { describeIssues } from '../web/validate.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';

function parseOrFail<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new CliError(`${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** The account with this email (the users and tokens commands), or the CLI's one-line error. */
export function requireUser(ctx: CliContext, email: string) {
  const user = findUserByEmail(ctx.db(), parseOrFail(lookupEmailSchema, email, '--email'));
  if (!user) throw new CliError(`no user with the email ${email} (see: simarena users list)`);
  return user;
}

export function registerUsers(program: Command, ctx: CliContext): void {
  const users = program.command('users').description('console accounts: admins and researchers');

  users
    .command('add')
    .description('create an account; without --password one is generated and printed once')
    .requiredOption('--email <email>', 'the sign-in email')
    .requiredOption('--role <role>', 'admin (everything) or researcher (read batches, analysis and exports)')
    .option('--password <password>', 'the password (at least 8 characters); prefer leaving it out and using the generated one')
    .action(async (options: { email: string; role: string; password?: string }) => {
      const input = parseOrFail(newUserSchema, options, 'users add');
      const result = await addUser(ctx.db(), input, 'cli', ctx.now());
      ctx.out(`User ${input.email} (${input.role}) created with id ${result.id}.`);
      if (result.password) ctx.out(`Password (shown once): ${result.password}`);
    });

  users
    .command('list')
    .description('list accounts')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const rows = listUsers(ctx.db()).map((u) => ({ id: u.id, email: u.email, role: u.role, disabled: u.disabled === 1, created_at: u.created_at, password_changed_at: u.password_changed_at }));
      if (options.json) {
        printJson(ctx, rows);
        return;
      }
      printTable(ctx, ['ID', 'EMAIL', 'ROLE', 'STATUS', 'CREATED'], rows.map((u) => [u.id, u.email, u.role, u.disabled ? 'disabled' : 'active', u.created_at]));
    });

  users
    .command('reset-password')
    .description('set a new password for an account; without --password one is generated and printed once')
    .requiredOption('--email <email>', 'the account')
    .option('--password <password>', 'the new password (at least 8 characters)')
    .action(async (options: { email: string; password?: string }) => {
      const user = requireUser(ctx, options.email);
      const password = options.password === undefined ? undefined : parseOrFail(passwordSchema, options.password, '--password');
      const generated = await resetUserPassword(ctx.db(), user, password, 'cli', ctx.now());
      ctx.out(`Password of ${user.email} reset.`);
      if (generated) ctx.out(`New password (shown once): ${generated}`);
    });

  for (const [name, enabled] of [['disable', false], ['enable', true]] as const) {
    users
      .command(name)
      .description(enabled ? 're-enable a disabled account' : 'disable an account (its sessions and API tokens stop working)')
      .requiredOption('--email <email>', 'the account')
      .action(async (options: { email: string }) => {
        const user = requireUser(ctx, options.email);
        setUserEnabled(ctx.db(), user.id, enabled, 'cli', ctx.now());
        ctx.out(`${user.email} ${enabled ? 'enabled' : 'disabled'}.`);
      });
  }
}
