import { resolveBatchRef } from '../batches/batch-ref.js';
import type { PlatformDeps } from '../recruiting/platform-deps.js';
import { type CliContext, CliError } from './cli-context.js';
import { cliPublicUrl, NO_PUBLIC_URL } from './public-url.js';

/** The batch a command names: the CLI's one rule (src/batches/batch-ref.ts). */
export function batchRef(ctx: CliContext, ref: string): number {
  return resolveBatchRef(ctx.db(), ref);
}

/**
 * What the Prolific and MTurk workflows need from the CLI. The study's (or HIT's) link is built with the public URL `batches link` uses
 * (src/cli/public-url.ts): publishing without one known would send participants to an address nobody serves.
 */
export function platformDeps(ctx: CliContext, options: { needsPublicUrl?: boolean } = {}): PlatformDeps {
  const known = cliPublicUrl(ctx);
  if (options.needsPublicUrl && !known) throw new CliError(NO_PUBLIC_URL);
  return {
    db: ctx.db(),
    config: known ? { ...ctx.config(), publicUrl: known.url } : ctx.config(),
    clock: ctx.now,
    actor: 'cli',
    onSend: (op) => ctx.err(`sending ${op.kind.replace('_', ' ')}${op.participant_id ? ` for ${op.participant_id}` : ''} (operation ${op.id}, try ${op.attempts})`),
  };
}


/**
 * A publish dry run's study link, and loudly on stderr (even with --json) why participants could not open it: the
 * real publish refuses such a link (src/recruiting/study-link.ts).
 */
export function sayStudyLink(ctx: CliContext, link: string, warnings: readonly string[], json: boolean): void {
  if (!json) ctx.out(`Study link: ${link}`);
  for (const warning of warnings) ctx.err(`WARNING: ${warning}`);
}
