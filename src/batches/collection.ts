import { recordAudit } from '../audit/audit.queries.js';
import type { Db } from '../db/connection.js';
import { findRun, insertSimpleRun, type RunRow, setCollectionRunModes } from '../generation/run.queries.js';
import { HUMAN_MODEL } from '../generation/mode.js';
import { newPublicId } from '../web/ids.js';
import { BatchError } from './batch-error.js';
import { insertBatch, insertBatchRun } from './batch.queries.js';
import { type BatchSettings, roleplayOf } from './batch.schema.js';
import type { CapacityResult } from './capacity-check.js';
import { getCollected, setReview } from './collected.queries.js';
import { scenarioFilter } from './scenario-filter.js';

// A collecting batch (issue 52: role-play; issue 53: writing) has no pairs: its participants write dialogues into
// its collection run, one scenario sample each, and a researcher accepts or rejects each before any is rated.

/** A scenario sample slot a collecting batch fills: one cast of one of its scenarios. */
export type CollectionSlot = { scenarioId: string; castId: number };

/** The casts of the batch's scenarios, in scenario and cast order. */
export function collectionSlots(db: Db, selector: BatchSettings['scenarios']): CollectionSlot[] {
  const allowed = scenarioFilter(db, selector);
  return db
    .prepare<[], { scenarioId: string; castId: number }>('SELECT scenario_id AS scenarioId, id AS castId FROM casts ORDER BY scenario_id, position, id')
    .all()
    .filter((slot) => allowed(slot.scenarioId));
}

/**
 * The capacity check of a collecting batch: it needs a scenario with a cast. A role-play batch without a fallback agent
 * pairs people two by two, so an odd number of planned places leaves one to the "no partner" code (a warning).
 */
export function collectingCapacity(settings: BatchSettings, slots: number): CapacityResult {
  const problems: CapacityResult['problems'] = [];
  if (slots === 0) problems.push({ level: 'error', message: 'None of the batch\'s scenarios has a cast: there is nothing to play.', numbers: { slots } });
  // Prolific places and MTurk assignments are published from plannedRaters: a collecting batch has no pairs to count them from.
  if (settings.provider.kind !== 'link' && settings.plannedRaters === null) {
    problems.push({ level: 'error', message: `A ${settings.task} batch on ${settings.provider.kind === 'prolific' ? 'Prolific' : 'MTurk'} needs plannedRaters: the places to publish.`, numbers: {} });
  }
  const roleplay = roleplayOf(settings);
  if (roleplay && !roleplay.partner.fallback && settings.plannedRaters !== null && settings.plannedRaters % 2 === 1) {
    problems.push({
      level: 'warning',
      message: `plannedRaters is ${settings.plannedRaters}, an odd number, and the batch has no fallback agent: at least one participant will find no partner (they get the paid "no partner" code).`,
      numbers: { plannedRaters: settings.plannedRaters },
    });
  }
  return { ok: !problems.some((p) => p.level === 'error'), pairs: 0, samples: slots, judgmentsPerPair: 0, judgmentsNeeded: 0, perRater: 0, ratersNeeded: 0, stoppedPairs: 0, sessionComparisons: 0, problems };
}

/** The modes a collecting batch's dialogues take, and the run's model: the fallback agent's, else `human`. */
function collectionModes(settings: BatchSettings): { modes: string[]; model: string } {
  const fallback = roleplayOf(settings)?.partner.fallback ?? null;
  return { modes: settings.task === 'roleplay' ? (fallback ? ['HUMANS', 'HUMAN_AGENT'] : ['HUMANS']) : ['HUMAN_SCRIPT'], model: fallback?.model ?? HUMAN_MODEL };
}

/**
 * A collection run holds every mode its batches collect: a fallback agent added to a draft (or a second round's batch
 * that has one) adds HUMAN_AGENT and, where the run had none, the agent's model. Modes are never taken away: the run
 * may hold dialogues of them already.
 */
export function fitCollectionRun(db: Db, run: RunRow, settings: BatchSettings): void {
  const wanted = collectionModes(settings);
  const had = JSON.parse(run.modes) as string[];
  const modes = [...had, ...wanted.modes.filter((m) => !had.includes(m))];
  const model = run.model === HUMAN_MODEL || run.model === null ? wanted.model : run.model;
  if (modes.length !== had.length || model !== run.model) setCollectionRunModes(db, run.id, { modes, model });
}

/** The run a collecting batch writes into: made now, or an earlier collection run of that name (a second round). */
function collectionRunFor(db: Db, settings: BatchSettings, actor: string, now: Date): RunRow {
  const name = settings.run ?? '';
  const existing = findRun(db, name);
  if (existing && existing.kind !== 'collection') {
    throw new BatchError(`run: "${name}" already names a run of kind ${existing.kind}; give the new batch's collection run a name of its own.`);
  }
  if (existing) {
    fitCollectionRun(db, existing, settings);
    return existing;
  }
  const { modes, model } = collectionModes(settings);
  // A collection is under way as long as its batch takes participants: "running", never generated (markInterruptedRuns
  // leaves collection runs alone).
  const id = insertSimpleRun(db, { name, kind: 'collection', state: 'running', model, modes, createdBy: actor }, now);
  const run = findRun(db, String(id));
  if (!run) throw new Error('collection run vanished inside its own transaction');
  return run;
}

/** Creates a draft collecting batch and its collection run, in one transaction. */
export function createCollectingBatch(db: Db, settings: BatchSettings, deps: { actor: string; now: Date; clonedFrom?: number }) {
  return db.transaction(() => {
    const slots = collectionSlots(db, settings.scenarios);
    const capacity = collectingCapacity(settings, slots.length);
    if (!capacity.ok) throw new BatchError(`This batch was not created: ${capacity.problems.map((p) => p.message).join(' ')}`);
    const run = collectionRunFor(db, settings, deps.actor, deps.now);
    const publicId = newPublicId();
    const batchId = insertBatch(
      db,
      { publicId, name: settings.name, settings: JSON.stringify(settings), judgeSalt: newPublicId(), clonedFrom: deps.clonedFrom ?? null, createdBy: deps.actor },
      deps.now,
    );
    insertBatchRun(db, batchId, run.id);
    recordAudit(db, { actor: deps.actor, action: 'batch.create', targetType: 'batch', targetId: batchId, details: { task: settings.task, run: run.name, slots: slots.length } }, deps.now);
    return { batchId, publicId, pairs: [], skipped: [], goldPairs: 0, capacity, run: { id: run.id, name: run.name } };
  })();
}

export type ReviewDecision = 'accepted' | 'rejected';

/**
 * A researcher's review of a collected dialogue. Accepting needs a dialogue raters can read (complete: one that ended
 * below the minimum of turns is never rated); once a rating batch paired it, the review stays as it is.
 */
export function reviewCollectedDialogue(db: Db, dialogueId: number, decision: ReviewDecision, deps: { actor: string; note: string | null; now: Date }): void {
  db.transaction(() => {
    const row = getCollected(db, dialogueId);
    if (!row) throw new BatchError(`Dialogue ${dialogueId} was not collected by a batch.`, 404);
    if (row.outcome === 'collecting') throw new BatchError(`Dialogue ${dialogueId} is still being collected; review it once it has ended.`, 409);
    const state = db.prepare<{ id: number }, string>('SELECT state FROM dialogues WHERE id = :id').pluck().get({ id: dialogueId });
    if (decision === 'accepted' && state !== 'complete') {
      throw new BatchError(`Dialogue ${dialogueId} ended with fewer spoken turns than its batch's minimum (${row.reason ?? 'incomplete'}); it cannot be rated, so it cannot be accepted.`, 409);
    }
    const pairedIn = db
      .prepare<{ id: number }, number>('SELECT DISTINCT batch_id FROM pairs WHERE dialogue_a_id = :id OR dialogue_b_id = :id ORDER BY batch_id')
      .pluck()
      .all({ id: dialogueId });
    if (pairedIn.length > 0 && decision !== row.review) {
      throw new BatchError(`Dialogue ${dialogueId} is already paired in rating batch ${pairedIn.join(', ')}; its review can no longer change.`, 409);
    }
    setReview(db, dialogueId, { decision, by: deps.actor, note: deps.note }, deps.now);
    recordAudit(db, { actor: deps.actor, action: `dialogue.${decision === 'accepted' ? 'accept' : 'reject'}`, targetType: 'dialogue', targetId: dialogueId, details: { batch: row.batch_id, note: deps.note } }, deps.now);
  }).immediate();
}
