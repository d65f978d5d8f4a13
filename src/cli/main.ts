import { Command, CommanderError } from 'commander';
import { type Config, loadConfig } from '../config.js';
import { type Db, openDatabase } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { ensureBuiltInLibrary } from '../scenarios/builtin-library.js';
import type { CliContext } from './cli-context.js';
import { registerMigrate } from './migrate.js';
import { registerScenarios } from './scenarios.js';
import { registerCalls } from './calls.js';
import { registerDialogues } from './dialogues.js';
import { registerGenerate } from './generate.js';
import { registerRuns } from './runs.js';
import { registerBatches } from './batches.js';
import { registerProlific } from './prolific.js';
import { registerMturk } from './mturk.js';
import { registerExport } from './export.js';
import { registerAnalyze } from './analyze.js';
import { registerPlan } from './plan.js';
import { registerUsers } from './users.js';
import { registerTokens } from './tokens.js';
import { registerBackup } from './backup.js';
import { registerEvaluate } from './evaluate.js';
import { registerLlmJudge } from './llm-judge.js';
import { registerEvaluations } from './evaluations.js';

export type CliIo = {
  env?: Record<string, string | undefined>;
  out?: (text: string) => void;
  err?: (text: string) => void;
  isTty?: boolean;
};

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('simarena')
    .description('simarena: generate social-simulation dialogues, run blinded pairwise human evaluations, analyse the results')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.out(s.replace(/\n$/, '')), writeErr: (s) => ctx.err(s.replace(/\n$/, '')) });
  registerMigrate(program, ctx);
  registerScenarios(program, ctx);
  registerGenerate(program, ctx);
  registerRuns(program, ctx);
  registerCalls(program, ctx);
  registerDialogues(program, ctx);
  registerBatches(program, ctx);
  registerProlific(program, ctx);
  registerMturk(program, ctx);
  registerExport(program, ctx);
  registerAnalyze(program, ctx);
  registerPlan(program, ctx);
  registerUsers(program, ctx);
  registerTokens(program, ctx);
  registerBackup(program, ctx);
  registerEvaluate(program, ctx);
  registerLlmJudge(program, ctx);
  registerEvaluations(program, ctx);
  // Subcommands inherit the parent's exit and output behaviour.
  const inherit = (command: Command) => {
    for (const sub of command.commands) {
      sub.exitOverride().configureOutput(program.configureOutput()).showHelpAfterError('(run with --help for usage)');
      inherit(sub);
    }
  };
  inherit(program);
  return program;
}

/** Runs the CLI in process and returns its exit code; the database is closed before returning. */
export async function runCli(argv: string[], io: CliIo = {}): Promise<number> {
  const out = io.out ?? ((text: string) => process.stdout.write(`${text}\n`));
  const err = io.err ?? ((text: string) => process.stderr.write(`${text}\n`));
  let config: Config | undefined;
  let db: Db | undefined;
  let applied: string[] = [];
  let loaded = { characters: 0, scenarios: 0 };
  let exitCode = 0;
  const ctx: CliContext = {
    out,
    err,
    isTty: io.isTty ?? false,
    env: io.env ?? process.env,
    now: () => new Date(),
    appliedMigrations: () => applied,
    libraryLoaded: () => loaded,
    setExitCode: (code) => {
      exitCode = code;
    },
    config: () => {
      config ??= loadConfig(io.env ?? process.env);
      return config;
    },
    db: () => {
      if (!db) {
        db = openDatabase(ctx.config().databasePath);
        applied = migrate(db);
        // Every command sees the built-in library, whichever opened the database first (the server does the same).
        loaded = ensureBuiltInLibrary(db, ctx.now());
      }
      return db;
    },
  };
  try {
    await buildProgram(ctx).parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    // The CLI's one rendering of a failure: a UserFacingError (CliError, BatchError, ConfigError, ...) is one line for
    // the person at the keyboard; anything else is internal, one line too, its stack only with DEBUG set.
    if (error instanceof UserFacingError) {
      err(`error: ${error.message}`);
      return 1;
    }
    err(`error: ${error instanceof Error ? error.message : String(error)}`);
    if ((io.env ?? process.env).DEBUG) err(String((error as Error).stack));
    return 1;
  } finally {
    db?.close();
  }
}
