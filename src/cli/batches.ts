import type { Command } from 'commander';
import { type BatchAction, type BatchView, deleteDraftBatch, editDraftBatch, listBatches, transitionBatch, getBatch } from '../batches/batch.commands.js';
import { BatchError } from '../batches/batch-error.js';
import { NAME_TAKEN } from '../batches/batch-name.js';
import { resolveBatchRef } from '../batches/batch-ref.js';
import { checkBatchCapacity } from '../batches/batch-capacity.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { describeCapacity } from '../batches/capacity-check.js';
import { countCollected } from '../batches/collected.queries.js';
import { createBatch } from '../batches/create-batch.js';
import { blockingFailures, type ChecklistItem, describeAddressLimits, describeFailures, payPerHour } from '../batches/launch-checklist.js';
import { describeMinimum } from '../batches/minimum-time.js';
import { formatMoney } from '../batches/pay.js';
import { platformPayFloor } from '../batches/platform-pay-floor.js';
import { raterLinks } from '../batches/rater-links.js';
import { exclusionLines, readSequentialSummaries, reallocationLines } from '../analysis/sequential-report.js';
import { comparisonStandingLines, readComparisonPlans } from '../analysis/sequential-standing.js';
import { consentTimeOfFullSession } from '../rating/consent-time.queries.js';
import { listReallocations } from '../rating/reallocation.queries.js';
import { listComparisonStops, listSequentialExclusions } from '../rating/sequential.queries.js';
import { readJsonFile } from '../scenarios/load-library.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';
import { cliPublicUrl, NO_PUBLIC_URL } from './public-url.js';
import { findProlificStudyId, listBatchPlatformLinks } from '../recruiting/platform-operations.queries.js';
import { transitionProlificStudy } from '../recruiting/prolific-workflows.js';
import { platformDeps } from './platform-deps.js';
import { expireMturkHits } from '../recruiting/mturk-workflows.js';

/** Every command's batch argument: an id, a public id or a name one batch alone has (resolveBatchRef). */
const BATCH_ARGUMENT = 'batch id or name';

/** The launch checklist of a batch with the time promised now and the configured pay floor (as the console shows it). */
function launchChecklistOf(ctx: CliContext, id: number): ChecklistItem[] {
  const batch = getBatch(ctx.db(), id);
  if (!batch) throw new CliError(`No batch with id ${id}`);
  const minutes = consentTimeOfFullSession(ctx.db(), id, batch.settings).minutes;
  // Prolific and MTurk need an https address: judged by the address raters reach, said on its own line.
  const publicUrl = cliPublicUrl(ctx);
  if (batch.settings.provider.kind !== 'link') {
    ctx.err(publicUrl ? `note: the https check uses ${publicUrl.url}, ${publicUrl.source}.` : `note: the https check was skipped. ${NO_PUBLIC_URL}`);
  }
  return batchLaunchChecklist(ctx.db(), id, { minutes, minPayPerHour: ctx.config().minPayPerHour, publicUrl: publicUrl?.url });
}

type JsonOption = { json?: boolean };

/** Runs a command that names a batch; a name another batch has is refused with the option that gives another. */
function withFreeName<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof BatchError && error.code === NAME_TAKEN) throw new CliError(`${error.message.replace(/\.$/, '')} with --name NEW.`, error.status, error.code);
    throw error;
  }
}

/** The settings of a batch file, with the name given by --name instead of the file's. */
function settingsOfFile(from: string, name: string | undefined): unknown {
  const settings = readJsonFile(from);
  if (name === undefined) return settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) throw new CliError(`${from}: must hold a JSON object of batch settings`);
  return { ...settings, name };
}

/** batches create: a draft batch from a settings file, with what was skipped and the raters it needs. */
function createFromFile(ctx: CliContext, options: { from: string; name?: string; json?: boolean }): void {
  const settings = settingsOfFile(options.from, options.name);
  const result = withFreeName(() => createBatch(ctx.db(), settings, { actor: 'cli', now: ctx.now() }));
  if (options.json) {
    printJson(ctx, { id: result.batchId, pairs: result.pairs.length, goldPairs: result.goldPairs, skipped: result.skipped, capacity: result.capacity, ...(result.run ? { run: result.run.name } : {}) });
    return;
  }
  if (result.run) {
    // A collecting batch (issue 52, 53): no pairs, a run its participants' dialogues land in.
    ctx.out(`Created batch ${result.batchId} (draft), collecting into run "${result.run.name}": its participants ${getBatch(ctx.db(), result.batchId)?.settings.task === 'write' ? 'write' : 'play'} ${result.capacity.samples} scenario cast(s).`);
    for (const problem of result.capacity.problems) ctx.out(`${problem.level}: ${problem.message}`);
    ctx.out(`Open it with: simarena batches open ${result.batchId}`);
    return;
  }
  ctx.out(`Created batch ${result.batchId} (draft) with ${result.pairs.length} pair(s)${result.goldPairs > 0 ? ` and ${result.goldPairs} gold pair(s)` : ''}.`);
  if (result.skipped.length > 0) {
    ctx.out(`Skipped ${result.skipped.length} scenario sample(s):`);
    for (const s of result.skipped) ctx.out(`  ${s.scenarioId} cast ${s.castId} sample ${s.sampleIndex} [${s.comparison.join(' vs ')}]: ${s.reason}`);
  }
  ctx.out(describeCapacity(result.capacity));
  ctx.out(`Open it with: simarena batches open ${result.batchId}`);
}

/** batches list: every batch with its state and progress, as a table or JSON. */
function printBatchList(ctx: CliContext, options: JsonOption): void {
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
        judgments: b.counts.regular,
        goldAnswers: b.counts.judgments - b.counts.regular,
        raters: b.counts.raters,
        createdAt: b.createdAt,
      })),
    );
    return;
  }
  printTable(
    ctx,
    ['ID', 'STATE', 'PROVIDER', 'PAIRS', 'DONE', 'JUDGMENTS', 'GOLD', 'NAME'],
    rows.map((b) => [b.id, b.state, b.settings.provider.kind, b.counts.pairs, b.counts.completedPairs, b.counts.regular, b.counts.judgments - b.counts.regular, b.name]),
  );
}

/** batches open|pause|close: the launch checklist before opening, then the state, then the platform when asked. */
async function changeBatchState(ctx: CliContext, action: BatchAction, ref: string, options: { onPlatform?: boolean }): Promise<void> {
  const id = resolveBatchRef(ctx.db(), ref);
  if (action === 'open' && ['draft', 'paused'].includes(getBatch(ctx.db(), id)?.state ?? '')) {
    // The launch checklist first: every failing item on its own line with the setting that fixes it.
    const checklist = launchChecklistOf(ctx, id);
    const failing = describeFailures(checklist);
    if (blockingFailures(checklist).length > 0) {
      for (const line of failing) ctx.err(line);
      throw new CliError(`Batch ${id} was not opened: fix the blocking items of the launch checklist above.`);
    }
    for (const line of failing) ctx.err(line);
    // A plain link's per-address limit, said before raters arrive (it passes: a statement, not a problem).
    const address = checklist.find((item) => item.key === 'addressLimits');
    if (address) ctx.err(`note: ${address.detail}`);
  }
  const view = transitionBatch(ctx.db(), id, action, 'cli', ctx.now());
  ctx.out(`Batch ${view.id} is ${view.state}.`);
  if (action === 'open') for (const p of checkBatchCapacity(ctx.db(), view.id).problems) ctx.err(`${p.level}: ${p.message}`);
  if (options.onPlatform && findProlificStudyId(ctx.db(), view.id)) {
    const state = await transitionProlificStudy(platformDeps(ctx), view.id, action === 'pause' ? 'PAUSE' : 'STOP');
    ctx.out(`Prolific study is ${state}.`);
  } else if (options.onPlatform && action === 'close' && listBatchPlatformLinks(ctx.db(), view.id, 'mturk').some((l) => l.kind === 'hit')) {
    ctx.out(`Expired ${await expireMturkHits(platformDeps(ctx), view.id)} MTurk HIT(s): no new worker can accept them; submitted work can still be settled.`);
  } else if (options.onPlatform) ctx.err(`Batch ${view.id} has no study on a platform; nothing else was changed.`);
}

/** The time a full session promises, the least it takes, and the pay per hour they imply (JSON and text of `batches show`). */
function timeAndPay(ctx: CliContext, batch: BatchView) {
  const time = consentTimeOfFullSession(ctx.db(), batch.id, batch.settings);
  const rate = payPerHour(batch.settings.pay, time.minutes);
  const floor = rate ? platformPayFloor(batch.settings.provider.kind, rate.currency) : null;
  const json = { promisedMinutes: time.minutes, source: time.source, minimum: time.minimum, payPerHour: rate?.perHour ?? null, platformMinimumPerHour: floor?.minimum ?? null, platformRecommendedPerHour: floor?.recommended ?? null };
  const why = { estimate: 'estimatedMinutes', measured: `the median of ${time.completedRaters} completed raters`, minimum: 'the least a full session takes' }[time.source];
  const lines = [`time: about ${time.minutes} minutes promised (${why}); a full session takes at least ${time.minimumMinutes} (${describeMinimum(time.minimum)})`];
  if (rate) {
    const money = (x: number) => formatMoney(x, rate.currency);
    const platform = floor ? `; ${floor.source} ${money(floor.minimum)}${floor.recommended === null ? '' : `, recommended ${money(floor.recommended)}`}` : '';
    lines.push(`pay: ${batch.settings.pay} = ${rate.text} at ${time.minutes} minutes${platform}`);
  }
  return { json, lines };
}

/** batches show: state and progress, and where each comparison of a sequential batch stands. */
function printBatch(ctx: CliContext, ref: string, options: JsonOption): void {
  const db = ctx.db();
  const id = resolveBatchRef(db, ref);
  const batch = getBatch(db, id);
  if (!batch) throw new CliError(`No batch with id ${id}`);
  const stops = listComparisonStops(db, batch.id);
  const sequential = batch.settings.stopping ? readSequentialSummaries(db, batch.id, batch.settings.stopping) : [];
  const exclusions = batch.settings.stopping ? exclusionLines(listSequentialExclusions(db, batch.id)) : [];
  const closedBySequence = batch.state === 'closed' && batch.settings.stopping !== null && stops.length > 0 && stops.every((c) => c.stopped_at !== null);
  const reallocations = batch.settings.stopping?.reallocate ? listReallocations(db, batch.id) : [];
  const time = timeAndPay(ctx, batch);
  if (options.json) {
    printJson(ctx, { id: batch.id, name: batch.name, state: batch.state, closedBySequentialStopping: closedBySequence, counts: batch.counts, ...(batch.settings.task === 'rate' ? {} : { collected: countCollected(db, batch.id) }), time: time.json, stopping: batch.settings.stopping, plans: readComparisonPlans(db, batch.settings, stops), comparisons: sequential, reallocations, exclusions });
    return;
  }
  ctx.out(`Batch ${batch.id} "${batch.name}": ${batch.state}${closedBySequence ? ' (closed itself: every comparison stopped under its sequential rule)' : ''}`);
  // A role-play or writing batch has no pairs: it collects dialogues, which are reviewed before any is rated.
  if (batch.settings.task === 'rate') ctx.out(`  ${batch.counts.completedPairs} of ${batch.counts.pairs} pairs complete, ${batch.counts.judgments} judgments, ${batch.counts.raters} raters`);
  else ctx.out(`  ${collectedLine(countCollected(db, batch.id))}, ${batch.counts.raters} participants`);
  for (const line of time.lines) ctx.out(`  ${line}`);
  if (batch.settings.provider.kind === 'link') ctx.out(`  per address: ${describeAddressLimits(batch.settings)}`);
  for (const line of comparisonStandingLines(db, batch.settings, stops)) ctx.out(`  ${line}`);
  for (const line of reallocationLines(reallocations)) ctx.out(`  ${line}`);
  for (const line of exclusions) ctx.out(`  ${line}`);
}

/** What a collecting batch holds: dialogues under way, ended by outcome, and their review. */
function collectedLine(c: ReturnType<typeof countCollected>): string {
  const ended = c.complete + c.incomplete + c.reported;
  return `${c.collecting} dialogue${c.collecting === 1 ? '' : 's'} under way; ${ended} collected (${c.complete} complete, ${c.incomplete} incomplete, ${c.reported} reported): ${c.accepted} accepted, ${c.rejected} rejected, ${c.pending} to review`;
}

/** batches link: the rater entry URL (and MTurk's ExternalQuestion), with the address it was built from. */
function printBatchLink(ctx: CliContext, ref: string): void {
  const id = resolveBatchRef(ctx.db(), ref);
  const batch = getBatch(ctx.db(), id);
  if (!batch) throw new CliError(`No batch with id ${id}`);
  const publicUrl = cliPublicUrl(ctx);
  if (!publicUrl) throw new CliError(NO_PUBLIC_URL);
  const links = raterLinks(batch, publicUrl.url);
  ctx.out(links.providerUrl);
  ctx.err(`note: the link uses ${publicUrl.url}, ${publicUrl.source}.`);
  if (links.externalQuestionXml) ctx.out(links.externalQuestionXml);
  if (batch.state !== 'open') ctx.err(`note: batch ${batch.id} is ${batch.state}; raters can use the link once it is open.`);
}

/** batches edit: the settings of --from and the --name replace a draft batch's own. */
function editBatch(ctx: CliContext, ref: string, options: { from?: string; name?: string }): void {
  if (options.from === undefined && options.name === undefined) throw new CliError('batches edit needs --from FILE.json or --name NAME');
  const changes = options.from === undefined ? {} : readJsonFile(options.from);
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) throw new CliError(`${options.from}: must hold a JSON object of batch settings`);
  const id = resolveBatchRef(ctx.db(), ref);
  const view = withFreeName(() => editDraftBatch(ctx.db(), id, { ...changes, ...(options.name === undefined ? {} : { name: options.name }) }, { actor: 'cli', now: ctx.now() }));
  ctx.out(`Batch ${view.id} (${view.name}) is updated: ${view.counts.pairs} pair(s).`);
}

/** batches delete: a draft batch and its pairs. */
function deleteBatch(ctx: CliContext, ref: string): void {
  const deleted = deleteDraftBatch(ctx.db(), resolveBatchRef(ctx.db(), ref), { actor: 'cli', now: ctx.now() });
  ctx.out(`Batch ${deleted.id} (${deleted.name}) is deleted.`);
}

export function registerBatches(program: Command, ctx: CliContext): void {
  const batches = program.command('batches').description('batches: pairs of dialogues judged by raters, or role-play studies that collect dialogues');

  batches
    .command('create')
    .description('create a draft batch from a JSON settings file (see docs/researcher/rating-batches.md)')
    .requiredOption('--from <file>', 'batch settings JSON file')
    .option('--name <name>', "the batch's name instead of the file's (a name another batch has is refused)")
    .option('--json', 'print the result as JSON')
    .action((options: { from: string; name?: string; json?: boolean }) => createFromFile(ctx, options));

  batches
    .command('list')
    .description(
      'list batches with their state and progress; JUDGMENTS counts answers to regular pairs (as the console and the analysis do, before exclusions), GOLD the onboarding and attention-check answers',
    )
    .option('--json', 'print a JSON array')
    .action((options: JsonOption) => printBatchList(ctx, options));

  const transitions: [BatchAction, string][] = [
    ['open', 'open a batch to raters (from draft or paused)'],
    ['pause', 'stop handing out comparisons for now (answers in progress are still stored)'],
    ['close', 'close a batch for good'],
  ];
  for (const [action, description] of transitions) {
    const command = batches.command(action).description(description).argument('<id>', BATCH_ARGUMENT);
    if (action !== 'open') command.option('--on-platform', `also ${action === 'pause' ? 'pause' : 'stop'} the batch's Prolific study${action === 'close' ? ' or expire its MTurk HITs' : ''}`);
    command.action((ref: string, options: { onPlatform?: boolean }) => changeBatchState(ctx, action, ref, options));
  }

  batches
    .command('show')
    .description('a batch\'s state and progress, and where each comparison of a sequential batch stands')
    .argument('<id>', BATCH_ARGUMENT)
    .option('--json', 'print JSON')
    .action((ref: string, options: JsonOption) => printBatch(ctx, ref, options));

  batches
    .command('link')
    .description('print the rater entry URL of a batch (for its provider)')
    .argument('<id>', BATCH_ARGUMENT)
    .action((ref: string) => printBatchLink(ctx, ref));

  batches
    .command('edit')
    .description('change a draft batch: the settings in --from (a JSON object, any keys of "batches create") and --name replace its own; refused once opened')
    .argument('<id>', BATCH_ARGUMENT)
    .option('--from <file>', 'JSON file with the settings to change')
    .option('--name <name>', 'a new name')
    .action((ref: string, options: { from?: string; name?: string }) => editBatch(ctx, ref, options));

  batches
    .command('delete')
    .description('delete a draft batch and its pairs (audited); refused once opened')
    .argument('<id>', BATCH_ARGUMENT)
    .action((ref: string) => deleteBatch(ctx, ref));
}
