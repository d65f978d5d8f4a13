import type { Command } from 'commander';
import { z } from 'zod';
import { listApiTokens } from '../auth/api-token.queries.js';
import { createApiToken, revokeApiToken } from '../auth/api-tokens.js';
import { listUsers } from '../auth/user.queries.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';
import { requireUser } from './users.js';

export function registerTokens(program: Command, ctx: CliContext): void {
  const tokens = program.command('tokens').description('API tokens for the JSON API (Authorization: Bearer ...)');

  tokens
    .command('create')
    .description('create an API token for a user; the secret is printed once and stored only as a hash')
    .requiredOption('--email <email>', 'the user the token acts as')
    .option('--name <name>', 'what the token is for', 'cli')
    .action((options: { email: string; name: string }) => {
      const name = z.string().trim().min(1).max(100).safeParse(options.name);
      if (!name.success) throw new CliError('--name must be 1 to 100 characters');
      const user = requireUser(ctx, options.email);
      const created = createApiToken(ctx.db(), user, name.data, 'cli', ctx.now());
      ctx.out(`Token ${created.id} "${created.name}" for ${user.email} (${user.role}). The secret, shown once:`);
      ctx.out(created.secret);
    });

  tokens
    .command('list')
    .description('list API tokens (never their secrets)')
    .option('--email <email>', 'only this user\'s tokens')
    .option('--json', 'print a JSON array')
    .action((options: { email?: string; json?: boolean }) => {
      const db = ctx.db();
      const owners = options.email ? [requireUser(ctx, options.email)] : listUsers(db);
      const rows = owners.flatMap((u) =>
        listApiTokens(db, u.id).map((t) => ({ id: t.id, email: u.email, name: t.name, prefix: `sa_${t.prefix}_`, created_at: t.created_at, last_used_at: t.last_used_at, revoked_at: t.revoked_at })),
      );
      if (options.json) {
        printJson(ctx, rows);
        return;
      }
      printTable(ctx, ['ID', 'EMAIL', 'NAME', 'PREFIX', 'LAST USED', 'STATUS'], rows.map((t) => [t.id, t.email, t.name, t.prefix, t.last_used_at ?? 'never', t.revoked_at ? 'revoked' : 'active']));
    });

  tokens
    .command('revoke')
    .description('revoke an API token by id (see: simarena tokens list)')
    .argument('<id>', 'token id')
    .action(async (id: string) => {
      if (!/^\d+$/.test(id)) throw new CliError('the token id is a number (see: simarena tokens list)');
      revokeApiToken(ctx.db(), Number(id), { id: 0, email: 'cli', role: 'admin' }, ctx.now());
      ctx.out(`Token ${id} revoked.`);
    });
}
