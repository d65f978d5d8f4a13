import type { Command } from 'commander';
import { type BatchAction, listBatches, transitionBatch, getBatch } from '../batches/batch.commands.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { describeCapacity } from '../batches/capacity-check.js';
import { createBatch } from '../batches/create-batch.js';
import { blockingFailures, type ChecklistItem, describeFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { readJsonFile } from '../scenarios/load-library.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';
import { findProlificStudyId, listBatchPlatformLinks } from '../recruiting/platform-operations.queries.js';
import { transitionProlificStudy } from '../recruiting/prolific-workflows.js';
import { prolificDeps } from './prolific.js';
import { expireMturkHits } from '../recruiting/mturk-workflows.js';
import { mturkDeps } from './mturk.js';

function batchId(text: string): number {
  if (!/^\d+$/.test(text)) throw new CliError(`ID must be a batch's numeric id (see "simarena batches list"), not "${text}"`);
  return Number(text);
}

/** The launch checklist of a batch with the time promised now and the configured pay floor (as the console shows it). */
function launchChecklistOf(ctx: CliContext, id: number): ChecklistItem[] {
  const batch = getBatch(ctx.db(), id);
  if (!batch) throw new CliError(`No batch with id ${id}`);
  const minutes = consentTimeOfFullSession(ctx.db(), id, batch.settings).minutes;
  return batchLaunchChecklist(ctx.db(), id, { minutes, minPayPerHour: ctx.config().minPayPerHour, publicUrl: ctx.config().publicUrl });
}

export function registerBatches(program: Command, ctx: CliContext): void {
  const batches = program.command('batches').description('rating batches: pairs of dialogues judged by raters');

  batches
    .command('create')
    .description('create a draft batch from a JSON settings file (see README, "Rating batches")')
    .requiredOption('--from <file>', 'batch settings JSON file')
    .option('--json', 'print the result as JSON')
    .action((options: { from: string; json?: boolean }) => {
      const result = createBatch(ctx.db(), readJsonFile(options.from), { actor: 'cli', now: ctx.now() });
      if (options.json) {
        printJson(ctx, { id: result.batchId, pairs: result.pairs.length, goldPairs: result.goldPairs, skipped: result.skipped, capacity: result.capacity });
        return;
      }
      ctx.out(`Created batch ${result.batchId} (draft) with ${result.pairs.length} pair(s)${result.goldPairs > 0 ? ` and ${result.goldPairs} gold pair(s)` : ''}.`);
      if (result.skipped.length > 0) {
        ctx.out(`Skipped ${result.skipped.length} scenario sample(s):`);
        for (const s of result.skipped) ctx.out(`  ${s.scenarioId} cast ${s.castId} sample ${s.sampleIndex} [${s.comparison.join(' vs ')}]: ${s.reason}`);
      }
      ctx.out(describeCapacity(result.capacity));
      ctx.out(`Open it with: simarena batches open ${result.batchId}`);
    });

  batches
    .command('list')
    .description('list batches with their state and progress')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const rows = listBatches(ctx.db());
      if (options.json) {
        printJson(
          ctx,
          rows.map((b) => ({
            id: b.id,
            name: b.name,
            state: b.state,
            provider: b.settings.provider.kind,
            comparisons: b.settings.comparisons,
            judgmentsPerPair: b.settings.judgmentsPerPair,
            pairs: b.counts.pairs,
            completedPairs: b.counts.completedPairs,
            judgments: b.counts.judgments,
            raters: b.counts.raters,
            createdAt: b.createdAt,
          })),
        );
        return;
      }
      printTable(
        ctx,
        ['ID', 'STATE', 'PROVIDER', 'PAIRS', 'DONE', 'JUDGMENTS', 'NAME'],
        rows.map((b) => [b.id, b.state, b.settings.provider.kind, b.counts.pairs, b.counts.completedPairs, b.counts.judgments, b.name]),
      );
    });

  const transitions: [BatchAction, string][] = [
    ['open', 'open a batch to raters (from draft or paused)'],
    ['pause', 'stop handing out comparisons for now (answers in progress are still stored)'],
    ['close', 'close a batch for good'],
  ];
  for (const [action, description] of transitions) {
    const command = batches.command(action).description(description).argument('<id>', 'batch id');
    if (action !== 'open') command.option('--on-platform', `also ${action === 'pause' ? 'pause' : 'stop'} the batch's Prolific study${action === 'close' ? ' or expire its MTurk HITs' : ''}`);
    command.action(async (id: string, options: { onPlatform?: boolean }) => {
      if (action === 'open' && ['draft', 'paused'].includes(getBatch(ctx.db(), batchId(id))?.state ?? '')) {
        // The launch checklist first: every failing item on its own line with the setting that fixes it.
        const checklist = launchChecklistOf(ctx, batchId(id));
        const failing = describeFailures(checklist);
        if (blockingFailures(checklist).length > 0) {
          for (const line of failing) ctx.err(line);
          throw new CliError(`Batch ${id} was not opened: fix the blocking items of the launch checklist above.`);
        }
        for (const line of failing) ctx.err(line);
      }
      const view = transitionBatch(ctx.db(), batchId(id), action, 'cli', ctx.now());
      ctx.out(`Batch ${view.id} is ${view.state}.`);
      if (action === 'open') for (const p of checkBatchCapacity(ctx.db(), view.id).problems) ctx.err(`${p.level}: ${p.message}`);
      if (options.onPlatform && findProlificStudyId(ctx.db(), view.id)) {
        const state = await transitionProlificStudy(prolificDeps(ctx), view.id, action === 'pause' ? 'PAUSE' : 'STOP');
        ctx.out(`Prolific study is ${state}.`);
      } else if (options.onPlatform && action === 'close' && listBatchPlatformLinks(ctx.db(), view.id, 'mturk').some((l) => l.kind === 'hit')) {
        ctx.out(`Expired ${await expireMturkHits(mturkDeps(ctx), view.id)} MTurk HIT(s): no new worker can accept them; submitted work can still be settled.`);
      } else if (options.onPlatform) ctx.err(`Batch ${view.id} has no study on a platform; nothing else was changed.`);
    });
  }

  batches
    .command('link')
    .description('print the rater entry URL of a batch (for its provider)')
    .argument('<id>', 'batch id')
    .action((id: string) => {
      const batch = getBatch(ctx.db(), batchId(id));
      if (!batch) throw new CliError(`No batch with id ${id}`);
      const links = raterLinks(batch, ctx.config().publicUrl);
      ctx.out(links.providerUrl);
      if (links.externalQuestionXml) ctx.out(links.externalQuestionXml);
      if (batch.state !== 'open') ctx.err(`note: batch ${batch.id} is ${batch.state}; raters can use the link once it is open.`);
    });
}
