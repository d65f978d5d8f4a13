import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';

/** What every command gets: where to print, the validated config, and the database (opened and migrated on first use). */
export type CliContext = {
  out: (text: string) => void;
  err: (text: string) => void;
  config: () => Config;
  db: () => Db;
  /** The migrations that opening the database applied (for `migrate` to report). */
  appliedMigrations: () => string[];
  /** What of the built-in library opening the database loaded (for `migrate` to report); absent: nothing. */
  libraryLoaded?: () => { characters: number; scenarios: number };
  now: () => Date;
  /** True when stdout is an interactive terminal (progress bars instead of log lines). */
  isTty: boolean;
  /** The environment the command runs in (named endpoints read their key variable from it at run time). */
  env?: Record<string, string | undefined>;
  /** Sets the exit code of a command that printed its output but found nothing to report (e.g. `analyze` on an empty batch: 2). */
  setExitCode?: (code: number) => void;
};

/** A mistake by the person at the keyboard: printed as one line, exit code 1, no stack trace. */
export class CliError extends UserFacingError {}

export function printJson(ctx: CliContext, value: unknown): void {
  ctx.out(JSON.stringify(value, null, 2));
}

/** Prints rows as an aligned text table. */
export function printTable(ctx: CliContext, headers: string[], rows: (string | number | null)[][]): void {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  for (const row of cells) ctx.out(row.map((c, i) => (c ?? '').padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}
