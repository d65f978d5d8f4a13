import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { computeBatchAnalysis, getBatchAnalysis } from '../analysis/analysis-cache.js';
import type { AnalysisReport } from '../analysis/analysis-report.js';
import { analyzeJudgments, DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../analysis/analyze.js';
import { resolveBatchRef } from '../batches/batch-ref.js';
import { type JudgmentsFile, readJudgmentsFile } from '../analysis/judgments-file.js';
import { combineQuestionReports } from '../analysis/question-reports.js';
import { computePooledAnalysis } from '../analysis/pooled-batches.js';
import { renderPooledMarkdown } from '../analysis/pooled-report-md.js';
import { renderAnalysisHtml } from '../analysis/report-html.js';
import { renderAnalysisMarkdown } from '../analysis/report-md.js';
import { noJudgmentsHeadline } from '../analysis/report-tables.js';
import { type CliContext, CliError } from './cli-context.js';

type AnalyzeFlags = {
  batch?: string;
  batches?: string;
  anchor?: string;
  judgments?: string;
  format: string;
  seed?: string;
  bootstrap?: string;
  order?: string;
  target?: string;
  resampleRaters?: boolean;
  question?: string;
  out?: string;
};

function wholeNumber(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${flag} must be a whole number from ${min} to ${max}`);
  return n;
}

export function registerAnalyze(program: Command, ctx: CliContext): void {
  program
    .command('analyze')
    .description('win rates, agreement, Bradley-Terry, position bias, length control and rater quality for a batch or a judgments file')
    .option('--batch <id>', 'a batch (id, public id or name) in the database')
    .option('--batches <ids>', 'several batches (ids, public ids or names, comma-separated) pooled across rounds')
    .option('--anchor <condition>', 'with --batches: the Bradley-Terry anchor (default the first SCRIPT condition)')
    .option('--judgments <file>', 'a CSV of judgments (item_id, rater_id, label, ...) or simarena\'s judgments export')
    .option('--format <format>', 'json, md or html', 'json')
    .option('--seed <n>', `bootstrap seed (default ${DEFAULT_SEED})`)
    .option('--bootstrap <n>', `bootstrap replicates, 0 for none (default ${DEFAULT_BOOTSTRAP})`)
    .option('--order <A,B>', 'for a file without condition_a/condition_b: which condition is a and which is b')
    .option('--target <half-width>', 'target interval half-width for sample-size planning, in points (default 5)')
    .option('--resample-raters', 'also resample raters in the win-rate bootstrap (slower)')
    .option('--question <id>', 'only this question of a batch (or file) with several questions (default: every question, the first at the top)')
    .option('--out <file>', 'write the report to this file instead of printing it')
    .action(async (flags: AnalyzeFlags) => {
      if ([flags.batch, flags.batches, flags.judgments].filter((f) => f !== undefined).length !== 1)
        throw new CliError('give either --batch ID or --judgments FILE.csv (or --batches ID,ID,... to pool batches)');
      const format = flags.format.toLowerCase();
      if (!['json', 'md', 'html'].includes(format)) throw new CliError('--format must be json, md or html');
      const seed = wholeNumber(flags.seed, '--seed', 0, 2 ** 32 - 1);
      const bootstrap = wholeNumber(flags.bootstrap, '--bootstrap', 0, 100_000);
      let target: number | undefined;
      if (flags.target !== undefined) {
        target = Number(flags.target);
        if (!(target > 0 && target < 50)) throw new CliError('--target must be a number of points between 0 and 50, e.g. 5');
        target /= 100;
      }
      let order: [string, string] | undefined;
      if (flags.order !== undefined) {
        const parts = flags.order.split(',').map((s) => s.trim());
        if (parts.length !== 2 || !parts[0] || !parts[1] || parts[0] === parts[1]) throw new CliError('--order must name two different conditions: A,B');
        order = [parts[0], parts[1]];
      }

      if (flags.anchor !== undefined && flags.batches === undefined) throw new CliError('--anchor goes with --batches');
      if (flags.question !== undefined && flags.batches !== undefined) throw new CliError('--question applies to one batch or file; pooled batches use each batch\'s first question');
      if (flags.batches !== undefined) {
        if (format === 'html') throw new CliError('a pooled analysis is printed as json or md');
        if (flags.resampleRaters || flags.target !== undefined) throw new CliError('--resample-raters and --target apply to one batch, not to --batches');
        const db = ctx.db();
        const ids = flags.batches.split(',').map((ref) => resolveBatchRef(db, ref));
        const pooled = computePooledAnalysis(db, ids, { seed, bootstrap, anchor: flags.anchor, now: ctx.now() });
        emit(ctx, flags.out, format === 'json' ? JSON.stringify(pooled, null, 2) : renderPooledMarkdown(pooled));
        return;
      }
      let report: AnalysisReport | null;
      if (flags.judgments) {
        const path = flags.judgments;
        const analyzeFile = (file: JudgmentsFile) =>
          analyzeJudgments(file.table, {
            source: { kind: 'file', path },
            now: ctx.now(),
            seed,
            bootstrap,
            targetHalfWidth: target,
            resampleRaters: flags.resampleRaters,
            tiesAllowed: null,
            attention: file.attention,
            exclusions: file.exclusions,
          });
        const file = await readJudgmentsFile(path, { order, question: flags.question });
        // A file with several questions (a question_id column): one report per question, read one question at a time.
        const files = [file];
        if (flags.question === undefined) for (const q of file.questions.slice(1)) files.push(await readJudgmentsFile(path, { order, question: q }));
        report = combineQuestionReports(files.map((f) => ({ id: f.question ?? '', text: f.question ?? '', report: analyzeFile(f), table: f.table })));
        if (flags.question !== undefined && file.questions.length > 1) report.question = { id: flags.question, text: flags.question, index: file.questions.indexOf(flags.question) };
      } else {
        const db = ctx.db();
        const batchId = resolveBatchRef(db, flags.batch as string);
        report = flags.resampleRaters
          ? computeBatchAnalysis(db, batchId, { now: ctx.now(), seed, bootstrap, targetHalfWidth: target, resampleRaters: true, question: flags.question })
          : getBatchAnalysis(db, batchId, { now: ctx.now(), seed, bootstrap, targetHalfWidth: target, question: flags.question });
        if (!report) throw new CliError(`no batch "${flags.batch as string}"`);
      }
      const text = format === 'json' ? JSON.stringify(report, null, 2) : format === 'md' ? renderAnalysisMarkdown(report) : await renderAnalysisHtml(report);
      emit(ctx, flags.out, text);
      sayWhenEmpty(ctx, report);
    });
}

/** Nothing to analyse is not a failure, but a script must see it: said on stderr, exit code 2 (docs/reference/cli.md). */
function sayWhenEmpty(ctx: CliContext, report: AnalysisReport): void {
  const empty = noJudgmentsHeadline(report);
  if (!empty) return;
  ctx.err(`note: ${empty}`);
  ctx.setExitCode?.(2);
}

function emit(ctx: CliContext, out: string | undefined, text: string): void {
  if (out) {
    try {
      writeFileSync(out, text);
    } catch (error) {
      throw new CliError(`cannot write ${out}: ${(error as Error).message}`);
    }
    ctx.err(`wrote ${out}`);
  } else ctx.out(text);
}
