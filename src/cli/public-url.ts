import { servedPublicUrl } from '../web/public-url.queries.js';
import type { CliContext } from './cli-context.js';

export type KnownPublicUrl = { url: string; source: string };

/**
 * The public URL the CLI builds rater links with: PUBLIC_URL of the CLI's own environment when set, else the one the
 * server last started with on this database; null when neither is known (never the CLI's default host and port,
 * which no server may be serving).
 */
export function cliPublicUrl(ctx: CliContext): KnownPublicUrl | null {
  const config = ctx.config();
  if (config.env.PUBLIC_URL) return { url: config.publicUrl, source: 'from PUBLIC_URL in this environment' };
  const served = servedPublicUrl(ctx.db());
  return served ? { url: served, source: 'the public URL the server last started with on this database' } : null;
}

export const NO_PUBLIC_URL =
  'No public URL is known for this database: set PUBLIC_URL to the address raters reach the server at, or start the server once on this database (it records the address it serves).';
