import type { Command } from 'commander';
import type { CliContext } from './cli-context.js';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('apply pending database migrations to DATABASE_PATH')
    .action(() => {
      ctx.db();
      const applied = ctx.appliedMigrations();
      ctx.out(applied.length === 0 ? 'Database is up to date.' : `Applied ${applied.length} migration(s): ${applied.join(', ')}`);
    });
}
