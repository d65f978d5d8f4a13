import { recordAudit } from '../audit/audit.queries.js';
import type { Db } from '../db/connection.js';
import { getDialogue, insertDialogue, listTurns, replaceTurns } from '../generation/dialogue.queries.js';
import { findRun, insertSimpleRun, type RunRow } from '../generation/run.queries.js';
import { describeIssues } from '../web/validate.js';
import { newPublicId } from '../web/ids.js';
import { BatchError } from './batch-error.js';
import { requireFreeBatchName } from './batch-name.js';
import { type CapacityResult, planCapacity, requireBatchCapacity } from './batch-capacity.js';
import {
  getBatchRow,
  insertBatch,
  insertBatchRun,
  insertComparison,
  insertPair,
  listSampleDialogues,
  type SampleDialogueRow,
} from './batch.queries.js';
import { type BatchSettings, batchSettingsSchema, isCollectingTask, MAX_LOOKS, ONE_KEY_MIN_SAFE, oneKeyChance } from './batch.schema.js';
import { deriveGoldVariant } from './derive-gold-variant.js';
import { formPairs, type PlannedPair, type SkippedSample } from './form-pairs.js';
import { chooseGoldSources, sampleKeyOf } from './gold-sources.js';
import { lookSchedule } from './sequential-rule.js';
import { serveOrders } from './serve-order.js';
import { scenarioFilter } from './scenario-filter.js';
import { createCollectingBatch } from './collection.js';

export type { PlannedPair, SkippedSample } from './form-pairs.js';

/** Gold pairs kept per batch for attention checks; a rater meets each at most once. */
export const ATTENTION_POOL_SIZE = 6;

export type BatchDeps = { actor: string; now: Date; random?: () => number };

/** How many onboarding pairs and attention-check pairs a batch with these settings asks for. */
export function goldWanted(settings: BatchSettings): { onboarding: number; attention: number } {
  return { onboarding: settings.onboarding?.pairs ?? 0, attention: settings.attentionChecks ? ATTENTION_POOL_SIZE : 0 };
}
/**
 * `conditions`: each condition (MODE:model) the runs hold, with its completed dialogues, for messages that name them.
 * `dialogues`: the runs' dialogues the pairs were formed from, read once (their turn counts read every turn).
 */
export type PairPlan = {
  pairs: PlannedPair[];
  skipped: SkippedSample[];
  runs: RunRow[];
  conditions: { condition: string; complete: number }[];
  dialogues: SampleDialogueRow[];
};
/** `run`: the collection run of a collecting batch (made or reused), null for a rating batch. */
export type CreateBatchResult = {
  batchId: number;
  publicId: string;
  pairs: PlannedPair[];
  skipped: SkippedSample[];
  goldPairs: number;
  capacity: CapacityResult;
  run: { id: number; name: string } | null;
};

export function parseBatchSettings(input: unknown): BatchSettings {
  const parsed = batchSettingsSchema.safeParse(input);
  if (!parsed.success) throw new BatchError(`Invalid batch settings: ${describeIssues(parsed.error)}`);
  // Stored settings are read as they were written; a batch file given now is held to a "one key" count at which an
  // honest keyboard rater is flagged by chance less than 1% of the time (issue 51).
  const oneKey = parsed.data.quality.oneKeyMinAnswers;
  if (oneKey < ONE_KEY_MIN_SAFE) {
    const chance = (n: number) => `${(oneKeyChance(n) * 100).toFixed(2).replace(/\.?0+$/, '')}%`;
    throw new BatchError(
      `Invalid batch settings: quality.oneKeyMinAnswers: ${oneKey} answers all with the same key happen to an honest keyboard rater with chance ${chance(oneKey)}; use ${ONE_KEY_MIN_SAFE} or more (${chance(ONE_KEY_MIN_SAFE)}).`,
    );
  }
  return parsed.data;
}

function resolveRuns(db: Db, names: string[]): RunRow[] {
  const runs: RunRow[] = [];
  const unknown: string[] = [];
  for (const name of names) {
    const run = findRun(db, name);
    if (!run) unknown.push(name);
    else if (!runs.some((r) => r.id === run.id)) runs.push(run);
  }
  if (unknown.length > 0) throw new BatchError(`Unknown run(s): ${unknown.join(', ')} (give a run id or name)`);
  return runs;
}

/** The batches named in `blockParticipantsOf` must exist, and a batch cannot block its own raters. */
export function checkBlockedBatches(db: Db, settings: BatchSettings, selfId?: number): void {
  const ids = settings.blockParticipantsOf;
  if (selfId !== undefined && ids.includes(selfId)) throw new BatchError(`blockParticipantsOf: batch ${selfId} cannot block its own participants.`);
  const unknown = ids.filter((id) => getBatchRow(db, id) === undefined);
  if (unknown.length > 0) throw new BatchError(`blockParticipantsOf: no batch with id ${unknown.join(', ')}.`);
}

function planFromSettings(db: Db, settings: BatchSettings): PairPlan {
  const runs = resolveRuns(db, settings.runs);
  const dialogues = listSampleDialogues(
    db,
    runs.map((r) => r.id),
  );
  const complete = new Map<string, number>();
  for (const d of dialogues) {
    const condition = `${d.mode}:${d.model}`;
    complete.set(condition, (complete.get(condition) ?? 0) + (d.state === 'complete' ? 1 : 0));
  }
  const conditions = [...complete].map(([condition, n]) => ({ condition, complete: n }));
  return { ...formPairs(dialogues, settings.comparisons, scenarioFilter(db, settings.scenarios)), runs, conditions, dialogues };
}

/**
 * Refuses a pair set in which a comparison has no pair, naming the comparisons and the conditions the runs do hold
 * (issue 40: a condition written with another model name than the run's gave "No pairs" and nothing to go on).
 */
export function requirePairsForEveryComparison(settings: BatchSettings, plan: PairPlan): void {
  const empty = settings.comparisons.filter((_, index) => !plan.pairs.some((p) => p.comparisonIndex === index));
  if (empty.length === 0) return;
  const held = plan.conditions.length > 0 ? plan.conditions.map((c) => `${c.condition} (${c.complete} completed)`).join(', ') : 'none';
  const which = empty.map(([a, b]) => `${a} vs ${b}`).join('; ');
  const none = plan.pairs.length === 0 ? `No pairs (${plan.skipped.length} sample(s) skipped)` : 'Some comparisons have no pair';
  throw new BatchError(
    `${none}: no scenario sample has a completed dialogue in both conditions of ${which}. The runs ${plan.runs.map((r) => r.name).join(', ')} hold these conditions: ${held}. Conditions are written MODE:model, as listed.`,
  );
}

/**
 * A `lookEvery` schedule is refused when it would give a comparison more than MAX_LOOKS looks over its pairs (the pairs
 * are known only once formed); `looks` is held to the same number by the schema.
 */
export function requireLookSchedule(settings: BatchSettings, plan: PairPlan): void {
  const rule = settings.stopping;
  if (!rule || rule.lookEvery === undefined) return;
  const tooMany = settings.comparisons.flatMap(([a, b], index) => {
    const pairs = plan.pairs.filter((p) => p.comparisonIndex === index).length;
    const looks = lookSchedule(rule, pairs).length;
    return looks > MAX_LOOKS ? [`${looks} looks over the ${pairs} pairs of ${a} vs ${b} (set lookEvery to at least ${Math.ceil(pairs / MAX_LOOKS)})`] : [];
  });
  if (tooMany.length === 0) return;
  throw new BatchError(
    `stopping.lookEvery ${rule.lookEvery} gives ${tooMany.join('; ')}. A comparison may have at most ${MAX_LOOKS} looks: each look's bound is computed over every look before it while raters' answers wait. Give a larger lookEvery, or looks instead.`,
  );
}

/**
 * The pairs a batch with these settings would contain, the samples it would skip, and the capacity check of that
 * pair set (with the gold pairs it would get); writes nothing.
 */
export function previewPairs(db: Db, settingsInput: unknown): { pairs: PlannedPair[]; skipped: SkippedSample[]; capacity: CapacityResult } {
  const settings = parseBatchSettings(settingsInput);
  const plan = planFromSettings(db, settings);
  const want = goldWanted(settings);
  // Which dialogues are drawn does not change the counts the check needs, so no randomness is asked for.
  const sources = chooseGoldSources(plan.dialogues, new Set(plan.pairs.map(sampleKeyOf)), want, () => 0);
  const gold = { onboarding: sources.onboarding.length, attention: sources.attention.length, fromRated: sources.fromRatedSamples };
  return { pairs: plan.pairs, skipped: plan.skipped, capacity: planCapacity(settings, plan.pairs, gold) };
}

function derivedRunFor(db: Db, source: RunRow | undefined, now: Date): number {
  const name = `${source?.name ?? 'unknown'} (gold variants)`;
  const existing = findRun(db, name);
  if (existing) return existing.id;
  return insertSimpleRun(db, { name, kind: 'import', state: 'complete', model: source?.model ?? null, modes: [], createdBy: 'system' }, now);
}

/** The shuffled or repeated-turn copy of a coherent dialogue, made once and shared by every batch that uses it. */
function derivedDialogueOf(db: Db, sourceId: number, random: () => number, now: Date): number {
  const existing = db
    .prepare<{ sourceId: number }, number>("SELECT id FROM dialogues WHERE derived_from = :sourceId AND origin = 'derived' ORDER BY id LIMIT 1")
    .pluck()
    .get({ sourceId });
  if (existing !== undefined) return existing;
  const source = getDialogue(db, sourceId);
  if (!source) throw new BatchError(`No dialogue ${sourceId}`, 404);
  const variant = deriveGoldVariant(listTurns(db, sourceId), random);
  const runId = derivedRunFor(db, findRun(db, String(source.run_id)), now);
  const id = insertDialogue(
    db,
    {
      runId,
      scenarioId: source.scenario_id,
      castId: source.cast_id,
      sampleIndex: source.sample_index,
      mode: source.mode,
      model: source.model,
      origin: 'derived',
      derivedFrom: sourceId,
      illustrative: source.illustrative === 1,
      state: 'complete',
      meta: { variant: variant.variant, note: 'Gold variant for onboarding and attention checks; not model output.' },
    },
    now,
  );
  replaceTurns(db, id, variant.turns);
  return id;
}

/** Writes comparisons, regular pairs and gold pairs for a batch (inside the caller's transaction). */
export function writePairSet(db: Db, batchId: number, settings: BatchSettings, plan: PairPlan, random: () => number, now: Date): number {
  for (const run of plan.runs) insertBatchRun(db, batchId, run.id);
  const comparisonIds = settings.comparisons.map(([a, b], position) => insertComparison(db, batchId, position, a, b));
  const orders = serveOrders(
    plan.pairs.map((p) => p.comparisonIndex),
    settings.comparisons.length,
  );
  for (const [i, p] of plan.pairs.entries()) {
    insertPair(db, {
      batchId,
      comparisonId: comparisonIds[p.comparisonIndex] ?? null,
      kind: 'regular',
      dialogueA: p.dialogueA,
      dialogueB: p.dialogueB,
      expected: null,
      scenarioId: p.scenarioId,
      castId: p.castId,
      sampleIndex: p.sampleIndex,
      serveOrder: orders[i],
    });
  }
  const want = goldWanted(settings);
  if (want.onboarding + want.attention === 0) return 0;
  // The dialogues the pairs were formed from, in the same transaction: reading them again held the write lock twice as
  // long (44 ms a read at 10,000 dialogues of 20 turns).
  const sources = chooseGoldSources(plan.dialogues, new Set(plan.pairs.map(sampleKeyOf)), want, random);
  if (sources.onboarding.length + sources.attention.length === 0) {
    throw new BatchError('Onboarding and attention checks need at least one completed dialogue with two or more turns.');
  }
  let made = 0;
  const taken = new Set<string>();
  const addGold = (kind: 'onboarding' | 'attention', source: SampleDialogueRow) => {
    const variant = derivedDialogueOf(db, source.id, random, now);
    // The coherent dialogue goes in slot a or b at random; the expected answer names the dialogue, never a screen side.
    let coherentIsA = random() < 0.5;
    if (taken.has(`${coherentIsA}:${source.id}`)) coherentIsA = !coherentIsA;
    if (taken.has(`${coherentIsA}:${source.id}`)) return;
    taken.add(`${coherentIsA}:${source.id}`);
    insertPair(db, {
      batchId,
      comparisonId: null,
      kind,
      dialogueA: coherentIsA ? source.id : variant,
      dialogueB: coherentIsA ? variant : source.id,
      expected: coherentIsA ? 'a' : 'b',
      scenarioId: source.scenario_id,
      castId: source.cast_id,
      sampleIndex: source.sample_index,
    });
    made += 1;
  };
  sources.onboarding.forEach((s) => addGold('onboarding', s));
  sources.attention.forEach((s) => addGold('attention', s));
  return made;
}

/**
 * Creates a draft batch: its settings, comparisons and pair set, in one IMMEDIATE transaction (so two processes
 * creating a batch of one name at once cannot both find it free).
 */
export function createBatch(db: Db, settingsInput: unknown, deps: BatchDeps & { clonedFrom?: number }): CreateBatchResult {
  const settings = parseBatchSettings(settingsInput);
  if (isCollectingTask(settings.task)) return createCollectingBatch(db, settings, deps);
  const random = deps.random ?? Math.random;
  return db.transaction(() => {
    requireFreeBatchName(db, settings.name);
    checkBlockedBatches(db, settings);
    const plan = planFromSettings(db, settings);
    requirePairsForEveryComparison(settings, plan);
    requireLookSchedule(settings, plan);
    const publicId = newPublicId();
    const batchId = insertBatch(
      db,
      { publicId, name: settings.name, settings: JSON.stringify(settings), judgeSalt: newPublicId(), clonedFrom: deps.clonedFrom ?? null, createdBy: deps.actor },
      deps.now,
    );
    const goldPairs = writePairSet(db, batchId, settings, plan, random, deps.now);
    // Refused inside the transaction, so nothing is stored for a batch whose pairs cannot all reach K.
    const capacity = requireBatchCapacity(db, batchId, 'This batch was not created:', 400);
    recordAudit(
      db,
      { actor: deps.actor, action: 'batch.create', targetType: 'batch', targetId: batchId, details: { pairs: plan.pairs.length, skipped: plan.skipped.length, goldPairs } },
      deps.now,
    );
    return { batchId, publicId, pairs: plan.pairs, skipped: plan.skipped, goldPairs, capacity, run: null };
  }).immediate();
}

export { planFromSettings };
