import type { Command } from 'commander';
import { recordAudit } from '../audit/audit.queries.js';
import { resolveBatchRef } from '../batches/batch-ref.js';
import { EXPORT_FORMATS, exportToPath } from '../export/export-batch.js';
import { type CliContext, CliError } from './cli-context.js';

type ExportFlags = {
  batch: string;
  format: string;
  out: string;
  includeExcluded?: boolean;
  includeGold?: boolean;
  withProviderIds?: boolean;
  withCalls?: boolean;
  majorityOnly?: boolean;
  minMargin: string;
  prompt: string;
  question?: string;
};

export function registerExport(program: Command, ctx: CliContext): void {
  program
    .command('export')
    .description('export a batch: judgments, Chatbot Arena battles, ACUTE-Eval tables, preference pairs, dialogues, Sotopia episodes, a Hugging Face folder or a whole-batch bundle')
    .requiredOption('--batch <id>', 'the batch (id, public id or name)')
    .requiredOption('--format <format>', EXPORT_FORMATS.join('|'))
    .requiredOption('--out <path>', 'file to write (a folder for acute and hf; .zip or .tar.gz for bundle)')
    .option('--include-excluded', "keep excluded raters' judgments and removed pairs, with an exclusion_reason column")
    .option('--include-gold', 'keep onboarding and attention-check answers, flagged by is_gold')
    .option('--with-provider-ids', "add the raters' raw provider ids (participant, study, session)")
    .option('--with-calls', 'dialogues: add the full record of model calls')
    .option('--majority-only', 'preferences: only pairs where the chosen dialogue has more than half of the judgments')
    .option('--min-margin <n>', 'preferences: least difference between votes for the chosen and the rejected dialogue', '1')
    .option('--prompt <which>', 'preferences: rater (what raters saw, no secrets) or script (the SCRIPT generation prompt)', 'rater')
    .option('--question <id>', 'one question of a batch with several: arena, acute, preferences and hf default to the first; judgments and bundle to every question')
    .action(async (flags: ExportFlags) => {
      if (!/^\d+$/.test(flags.minMargin) || Number(flags.minMargin) < 1) throw new CliError('--min-margin must be a whole number of at least 1');
      const db = ctx.db();
      const result = await exportToPath(
        db,
        {
          batch: String(resolveBatchRef(db, flags.batch)),
          format: flags.format as (typeof EXPORT_FORMATS)[number],
          includeExcluded: flags.includeExcluded === true,
          includeGold: flags.includeGold === true,
          withProviderIds: flags.withProviderIds === true,
          withCalls: flags.withCalls === true,
          majorityOnly: flags.majorityOnly === true,
          minMargin: Number(flags.minMargin),
          prompt: flags.prompt as 'rater' | 'script',
          question: flags.question,
        },
        flags.out,
        { now: ctx.now },
      );
      recordAudit(
        db,
        { actor: 'cli', action: 'batch.export', targetType: 'batch', targetId: result.meta.batch.id, details: { format: result.format, rows: result.rows, options: result.meta.options } },
        ctx.now(),
      );
      ctx.out(`Exported ${result.rows} row(s) of batch ${result.meta.batch.id} as ${result.format}: ${result.paths.join(', ')}`);
    });
}
