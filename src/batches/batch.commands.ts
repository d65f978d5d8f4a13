import { recordAudit } from '../audit/audit.queries.js';
import type { Db } from '../db/connection.js';
import { findRun } from '../generation/run.queries.js';
import { requireLaunchChecklist } from './batch-launch.js';
import { BatchError } from './batch-error.js';
import { freeCopyName, requireFreeBatchName } from './batch-name.js';
import { requireBatchCapacity } from './batch-capacity.js';
import {
  type BatchCounts,
  type BatchRow,
  batchCounts,
  countBatchJudgments,
  countBatchLooks,
  deleteBatchRow,
  deletePairSet,
  listClonesOf,
  getBatchRow,
  listBatchRows,
  setBatchState,
  updateBatchSettingsRow,
} from './batch.queries.js';
import type { BatchSettings, BatchState } from './batch.schema.js';
import { readBatchSettings } from './batch-settings.js';
import { fitCollectionRun } from './collection.js';
import {
  type BatchDeps,
  type CreateBatchResult,
  checkBlockedBatches,
  createBatch,
  parseBatchSettings,
  planFromSettings,
  requireLookSchedule,
  requirePairsForEveryComparison,
  writePairSet,
} from './create-batch.js';

export type BatchView = {
  id: number;
  publicId: string;
  name: string;
  state: BatchState;
  settings: BatchSettings;
  questionVersion: number;
  clonedFrom: number | null;
  createdBy: string | null;
  createdAt: string;
  openedAt: string | null;
  closedAt: string | null;
  counts: BatchCounts;
};

/**
 * Settings that would bias data already collected: the pair set and what the rater is asked and shown; and the flags
 * declared grounds for exclusion (issue 51), which chosen after seeing the data could steer the result.
 */
export const FROZEN_KEYS = ['runs', 'comparisons', 'scenarios', 'question', 'questions', 'context', 'allowTie', 'stopping', 'equivalenceMargin', 'exclusionGrounds'] as const satisfies readonly (keyof BatchSettings)[];
/**
 * Settings a sequential look depends on (issue 51): when a pair is complete (K) and which raters' judgments count
 * (the quality thresholds). Frozen once the first look is taken: a look stands as taken, and later looks must count
 * pairs and raters as it did.
 */
export const SEQUENTIAL_FROZEN_KEYS = ['judgmentsPerPair', 'quality'] as const satisfies readonly (keyof BatchSettings)[];

/**
 * The keys frozen for a batch now: FROZEN_KEYS once judgments exist, before that the equivalence margin once opened
 * (issue 53), and the sequential ones once a look is taken.
 */
export function frozenKeys(db: Db, batch: Pick<BatchView, 'id' | 'counts' | 'openedAt'>): (keyof BatchSettings)[] {
  const before: (keyof BatchSettings)[] = batch.counts.judgments > 0 ? [...FROZEN_KEYS] : batch.openedAt ? ['equivalenceMargin'] : [];
  return [...before, ...(countBatchLooks(db, batch.id) > 0 ? SEQUENTIAL_FROZEN_KEYS : [])];
}
const PAIR_SET_KEYS = ['runs', 'comparisons', 'scenarios', 'onboarding', 'attentionChecks'] as const satisfies readonly (keyof BatchSettings)[];

export type BatchAction = 'open' | 'pause' | 'close';

/** Allowed lifecycle moves: draft → open; open ⇄ paused; anything but closed → closed; closed is final. */
const TRANSITIONS: Record<BatchAction, { from: BatchState[]; to: BatchState }> = {
  open: { from: ['draft', 'paused'], to: 'open' },
  pause: { from: ['open'], to: 'paused' },
  close: { from: ['draft', 'open', 'paused'], to: 'closed' },
};

export function toBatchView(db: Db, row: BatchRow): BatchView {
  const settings = readBatchSettings(row);
  return {
    id: row.id,
    publicId: row.public_id,
    name: row.name,
    state: row.state,
    settings,
    questionVersion: row.question_version,
    clonedFrom: row.cloned_from,
    createdBy: row.created_by,
    createdAt: row.created_at,
    openedAt: row.opened_at,
    closedAt: row.closed_at,
    counts: batchCounts(db, row.id, settings.judgmentsPerPair),
  };
}

export function listBatches(db: Db): BatchView[] {
  return listBatchRows(db).map((row) => toBatchView(db, row));
}

export function getBatch(db: Db, batchId: number): BatchView | undefined {
  const row = getBatchRow(db, batchId);
  return row ? toBatchView(db, row) : undefined;
}

function requireBatch(db: Db, batchId: number): BatchRow {
  const row = getBatchRow(db, batchId);
  if (!row) throw new BatchError(`No batch with id ${batchId}`, 404);
  return row;
}

export function transitionBatch(db: Db, batchId: number, action: BatchAction, actor: string, now: Date): BatchView {
  return db.transaction(() => {
    const row = requireBatch(db, batchId);
    const move = TRANSITIONS[action];
    if (row.state === move.to) return toBatchView(db, row);
    if (!move.from.includes(row.state)) throw new BatchError(`Batch ${batchId} is ${row.state}; it cannot be moved to ${move.to}.`, 409);
    if (action === 'open') {
      requireBatchCapacity(db, batchId, `Batch ${batchId} was not opened:`, 409);
      requireLaunchChecklist(db, batchId);
    }
    setBatchState(db, batchId, move.to, now);
    recordAudit(db, { actor, action: `batch.${action}`, targetType: 'batch', targetId: batchId, details: { from: row.state } }, now);
    return toBatchView(db, requireBatch(db, batchId));
  }).immediate();
}

/**
 * Replaces a batch's settings. Once judgments exist the frozen keys must stay as they are (changing them would mix
 * answers to different questions or pair sets); before that, a changed pair set is formed again.
 */
export function updateBatchSettings(db: Db, batchId: number, settingsInput: unknown, deps: BatchDeps): BatchView {
  const next = parseBatchSettings(settingsInput);
  const random = deps.random ?? Math.random;
  return db.transaction(() => {
    const row = requireBatch(db, batchId);
    if (row.state === 'closed') throw new BatchError(`Batch ${batchId} is closed; its settings can no longer change.`, 409);
    if (next.name !== row.name) requireFreeBatchName(db, next.name, batchId);
    checkBlockedBatches(db, next, batchId);
    const current = readBatchSettings(row);
    // A batch keeps its task and, collecting, its run: its participants and dialogues belong to them.
    if (next.task !== current.task) throw new BatchError(`Batch ${batchId} is a ${current.task} batch; its task cannot change. Create a new batch instead.`, 409);
    if (next.run !== current.run) throw new BatchError(`Batch ${batchId} collects into run "${current.run ?? ''}"; that cannot change. Create a new batch instead.`, 409);
    const changed = (Object.keys(next) as (keyof BatchSettings)[]).filter((k) => JSON.stringify(next[k]) !== JSON.stringify(current[k]));
    // Issue 53: the equivalence margin is stated before anyone answers, so no one can choose it after seeing the data.
    if (row.opened_at !== null && changed.includes('equivalenceMargin')) {
      throw new BatchError(`Batch ${batchId} has been opened; its equivalenceMargin was stated in advance and can no longer change. Clone the batch to change it.`, 409);
    }
    const hasJudgments = countBatchJudgments(db, batchId) > 0;
    const frozen = changed.filter((k) => (FROZEN_KEYS as readonly string[]).includes(k));
    if (hasJudgments && frozen.length > 0) {
      throw new BatchError(`Batch ${batchId} has judgments; these settings are frozen: ${frozen.join(', ')}. Clone the batch to change them.`, 409);
    }
    const looks = countBatchLooks(db, batchId);
    const lookFrozen = looks > 0 ? changed.filter((k) => (SEQUENTIAL_FROZEN_KEYS as readonly string[]).includes(k)) : [];
    if (lookFrozen.length > 0) {
      throw new BatchError(
        `Batch ${batchId} has taken ${looks} sequential look${looks === 1 ? '' : 's'}, which counted pairs complete at ${current.judgmentsPerPair} judgments and raters by its quality thresholds; these settings are frozen: ${lookFrozen.join(', ')}. Clone the batch to change them.`,
        409,
      );
    }
    const pairSetChanged = changed.some((k) => (PAIR_SET_KEYS as readonly string[]).includes(k));
    if (pairSetChanged && hasJudgments) {
      throw new BatchError(`Batch ${batchId} has judgments; its onboarding and attention-check pairs can no longer change.`, 409);
    }
    // A new stopping rule is held to the pairs the batch would have (those it has, unless the pair set changes too).
    if (changed.includes('stopping') && !pairSetChanged) requireLookSchedule(next, planFromSettings(db, next));
    if (pairSetChanged) {
      const plan = planFromSettings(db, next);
      requirePairsForEveryComparison(next, plan);
      requireLookSchedule(next, plan);
      deletePairSet(db, batchId);
      writePairSet(db, batchId, next, plan, random, deps.now);
    }
    // Any question's text or rules, not only the first's (`question` mirrors the first of `questions`).
    const questionVersion = changed.includes('question') || changed.includes('questions') ? row.question_version + 1 : row.question_version;
    updateBatchSettingsRow(db, batchId, next.name, JSON.stringify(next), questionVersion);
    const collectionRun = next.task === 'rate' || !next.run ? undefined : findRun(db, next.run);
    if (collectionRun?.kind === 'collection') fitCollectionRun(db, collectionRun, next);
    recordAudit(db, { actor: deps.actor, action: 'batch.update', targetType: 'batch', targetId: batchId, details: { changed } }, deps.now);
    return toBatchView(db, requireBatch(db, batchId));
  }).immediate();
}

/** Refused unless the batch is a draft: what `batches edit` and `batches delete` may change. */
function requireDraft(db: Db, batchId: number, doing: string): BatchRow {
  const row = requireBatch(db, batchId);
  if (row.state !== 'draft') throw new BatchError(`Batch ${batchId} is ${row.state}; only a draft batch can be ${doing}.`, 409);
  return row;
}

/**
 * Edits a draft batch (`simarena batches edit`, issue 40): the settings given replace the batch's, the others stay;
 * checked and its pair set formed again as a console edit is (updateBatchSettings). Refused once the batch was opened.
 */
export function editDraftBatch(db: Db, batchId: number, changes: Record<string, unknown>, deps: BatchDeps): BatchView {
  return db.transaction(() => {
    const row = requireDraft(db, batchId, 'edited');
    return updateBatchSettings(db, batchId, { ...readBatchSettings(row), ...changes }, deps);
  }).immediate();
}

/**
 * Deletes a draft batch with its pairs (`simarena batches delete`, issue 40), audited with its name and settings first.
 * Refused once the batch was opened, when it holds an answer (a preview's), or when another batch was cloned from it
 * (that batch names it).
 */
export function deleteDraftBatch(db: Db, batchId: number, deps: { actor: string; now: Date }): { id: number; name: string } {
  return db.transaction(() => {
    const row = requireDraft(db, batchId, 'deleted');
    if (countBatchJudgments(db, batchId) > 0) throw new BatchError(`Batch ${batchId} holds answers; it is not deleted.`, 409);
    const clones = listClonesOf(db, batchId);
    if (clones.length > 0) throw new BatchError(`Batch ${batchId} was cloned to batch ${clones.join(', ')}, which name it; it is not deleted.`, 409);
    recordAudit(db, { actor: deps.actor, action: 'batch.delete', targetType: 'batch', targetId: batchId, details: { name: row.name, settings: readBatchSettings(row) } }, deps.now);
    deleteBatchRow(db, batchId);
    return { id: batchId, name: row.name };
  }).immediate();
}

/**
 * A new draft batch with the same settings (and a fresh pair set, link and salt); `overrides` may change any key. Its
 * name is the first free of "NAME (copy)", "NAME (copy 2)", ...; a name given in `overrides` must be free.
 */
export function cloneBatch(db: Db, batchId: number, deps: BatchDeps & { overrides?: Partial<BatchSettings> }): CreateBatchResult {
  const row = requireBatch(db, batchId);
  const settings = readBatchSettings(row);
  const input = { ...settings, name: freeCopyName(db, settings.name), ...deps.overrides };
  return createBatch(db, input, { ...deps, clonedFrom: batchId });
}
