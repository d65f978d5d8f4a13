import type { Command } from 'commander';
import { paperSectionTables } from '../analysis/paper-report-tables.js';
import { loadRunPaperSection } from '../analysis/paper-table.queries.js';
import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import { evaluationCallTotals, type EvaluationRow, listRunEvaluations } from '../evaluation/evaluation.queries.js';
import { storedObjectSchema } from '../generation/run-columns.schema.js';
import { findRun } from '../generation/run.queries.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';

function listAll(db: Db): EvaluationRow[] {
  return db
    .prepare<[], EvaluationRow>(
      `SELECT id, name, kind, run_id, batch_id, state, judge_model, endpoint_name, base_url, temperature, prompt_version, prompt_hash, settings,
              provider_batch_id, provider_input_file_id, error, created_by, created_at, started_at, finished_at FROM evaluations ORDER BY id`,
    )
    .all();
}

const cell = (v: string | number) => String(v).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function registerEvaluations(program: Command, ctx: CliContext): void {
  const group = program.command('evaluations').description('automatic evaluations (simarena evaluate, llm-judge) and the paper\'s metrics of a run');
  group
    .command('list')
    .description('every evaluation with its judge, prompts, state, calls and tokens')
    .option('--run <run>', 'only the evaluations of this run (id or name)')
    .option('--json', 'print JSON')
    .action((flags: { run?: string; json?: boolean }) => {
      const db = ctx.db();
      let rows: EvaluationRow[];
      if (flags.run !== undefined) {
        const run = findRun(db, flags.run);
        if (!run) throw new CliError(`no run "${flags.run}": see simarena runs list`);
        rows = listRunEvaluations(db, run.id);
      } else rows = listAll(db);
      const withTotals = rows.map((e) => ({ ...e, settings: parseJsonColumn(storedObjectSchema, e.settings, `evaluations.settings of evaluation ${e.id}`), calls: evaluationCallTotals(db, e.id) }));
      if (flags.json) return printJson(ctx, withTotals);
      printTable(
        ctx,
        ['id', 'name', 'kind', 'of', 'judge', 'prompts', 'state', 'calls', 'tokens'],
        withTotals.map((e) => [
          e.id, e.name, e.kind, e.run_id !== null ? `run ${e.run_id}` : `batch ${e.batch_id}`, e.judge_model, `${e.prompt_version} (${e.prompt_hash})`, e.state, e.calls.calls,
          e.calls.prompt_tokens + e.calls.completion_tokens,
        ]),
      );
    });
  group
    .command('metrics')
    .description('the paper table of a run: per condition and category, words per turn, leakage, and goal, believability and deals from its evaluations')
    .requiredOption('--run <run>', 'the run (id or name)')
    .option('--format <format>', 'json or md', 'md')
    .action((flags: { run: string; format: string }) => {
      const db = ctx.db();
      const run = findRun(db, flags.run);
      if (!run) throw new CliError(`no run "${flags.run}": see simarena runs list`);
      if (!['json', 'md'].includes(flags.format)) throw new CliError('--format must be json or md');
      const section = loadRunPaperSection(db, run.id);
      if (flags.format === 'json') return printJson(ctx, section);
      const lines = [`# Paper metrics of run ${run.name}`, ''];
      const tables = paperSectionTables(section);
      if (tables.length === 0) lines.push('No complete dialogue.');
      for (const { title, note, table } of tables) {
        lines.push(`## ${title}`, '');
        if (note) lines.push(note, '');
        lines.push(`| ${table.headers.map(cell).join(' | ')} |`, `|${table.headers.map(() => ' --- ').join('|')}|`, ...table.rows.map((r) => `| ${r.map(cell).join(' | ')} |`), '');
      }
      ctx.out(lines.join('\n'));
    });
}
