import { awaitBatchAnalysis, type ServedAnalysis, serveBatchAnalysis } from '../analysis/background-analysis.js';
import { batchMedianSeconds } from '../analysis/batch-median-time.queries.js';
import { listRaterFiguresAfter } from '../analysis/rater-figures.queries.js';
import { qualityFlags } from '../analysis/rater-quality.js';
import { getBatchRow } from '../batches/batch.queries.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { type Decision, decideParticipant, minutesSpent, outcomeOf } from './participant-decision.js';
import { countJudgmentsOnRemovedPairs, listParticipantsAfter, type ParticipantRater } from './participants.queries.js';
import { createRaterQualityLookup, qualityOfFigures, qualityStateOf, type RaterQualityLookup, type StoredRaterQuality } from './rater-quality-lookup.js';

/** Stored figures read per part of a whole batch's list of them. */
const FIGURES_PART = 5_000;
/** Participants read per part of a whole batch's list. */
const PARTICIPANTS_PART = 2_000;
/**
 * Tries at reading the figures from the served result's page parts: a try fails when a newer result replaced it
 * meanwhile (the worker stores from its own process at any time); after the last the whole report is read.
 */
const PART_TRIES = 3;

export const FIGURES_NOT_COMPUTED = 'The rater quality figures could not be computed just now; try again in a moment.';

/** The figures could not be brought up to date: nothing may be decided on stale or missing figures. */
export class FiguresUnavailableError extends UserFacingError {
  constructor() {
    super(FIGURES_NOT_COMPUTED, 503, 'figures_unavailable');
  }
}

/**
 * What a batch's participants need for their quality figures and flags, read once per list: the judgments on removed
 * pairs (which the analysis leaves out), the batch's median time and onboarding threshold, and the raters' pseudonyms.
 */
export function qualityContextOf(db: Db, batchId: number, threshold: number | null, lookup: RaterQualityLookup) {
  return { removed: countJudgmentsOnRemovedPairs(db, batchId), medianSeconds: batchMedianSeconds(db, batchId), threshold, judges: lookup.judgeNames(batchId) };
}
export type QualityContext = ReturnType<typeof qualityContextOf>;

/** A rater with their pseudonym, stored figures (when the analysis holds them), flags and quality state. */
export function participantOf<R extends ParticipantRater>(r: R, q: QualityContext, figureOf: Map<string, StoredRaterQuality>) {
  const judge = q.judges.of(r);
  const figures: StoredRaterQuality | undefined = figureOf.get(judge);
  const quality = qualityStateOf(r, r.regular_judgments - (q.removed.get(r.id) ?? 0), figures);
  const flags = qualityFlags(figures, q.medianSeconds, {
    attentionFailures: r.attention_failures,
    onboardingCorrect: r.onboarding_correct,
    onboardingAnswered: r.onboarding_answered,
    onboardingThreshold: q.threshold,
  });
  // An object literal, not spreads: the payment CSV makes one per participant (50,000 in the benchmark's batch).
  return { rater: r, judge, figures, quality, flags };
}

/**
 * Every rater's figures of a served result: its stored figures read in parts of FIGURES_PART (in pseudonym order,
 * answering other requests between parts), each part checked to be of the same result; read again from the newer
 * result when one replaced it meanwhile, and from the whole report (parsed once per result) after the last try or for
 * a row stored without parts. Null when no report can be read.
 */
export async function readAllFigures(
  db: Db,
  batchId: number,
  first: ServedAnalysis,
  deps: { lookup: RaterQualityLookup; clock: () => Date },
): Promise<Map<string, StoredRaterQuality> | null> {
  let served: ServedAnalysis | null = first;
  for (let tries = 1; served?.pageParts && tries < PART_TRIES; tries++) {
    const current: ServedAnalysis = served;
    const figures = new Map<string, StoredRaterQuality>();
    for (let after = ''; ; ) {
      const part = current.readParts((partsId) => listRaterFiguresAfter(db, batchId, partsId, after, FIGURES_PART));
      if (!part) break;
      for (const row of part) figures.set(row.judge, qualityOfFigures(row));
      const last = part.at(-1);
      if (!last || part.length < FIGURES_PART) return figures;
      after = last.judge;
      await new Promise((resolve) => setImmediate(resolve));
    }
    served = serveBatchAnalysis(db, batchId, { now: deps.clock });
  }
  const report = (await served?.report()) ?? null;
  return report ? deps.lookup.figures(report) : null;
}

/**
 * The figures of a batch as of now, for a payment decision: the analysis worker brings the stored figures up to date
 * first (the event loop serves other requests meanwhile). Null when there is no batch; FiguresUnavailableError when
 * they cannot be computed.
 */
export async function currentFigures(db: Db, batchId: number, deps: { lookup: RaterQualityLookup; clock: () => Date }): Promise<Map<string, StoredRaterQuality> | null> {
  const served = await awaitBatchAnalysis(db, batchId, { now: deps.clock, fresh: true });
  if (!served) return null;
  if (!served.stored || served.refreshFailed) throw new FiguresUnavailableError();
  const figureOf = await readAllFigures(db, batchId, served, deps);
  if (!figureOf) throw new FiguresUnavailableError();
  return figureOf;
}

/** A participant of a batch with the payment decision the console and the settle commands act on. */
export type DecidedParticipant = {
  raterId: number;
  provider: string;
  participantId: string | null;
  studyId: string | null;
  sessionId: string | null;
  judge: string;
  /** raters.status as stored (`completed`, `screened_out`, `withdrew`, `no_consent`, or a step still in progress). */
  status: string;
  /** The outcome as people read it (participant-decision.ts, outcomeOf). */
  outcome: string;
  excluded: boolean;
  exclusionReason: string | null;
  decision: Decision;
  why: string;
  /** Regular judgments they gave (a bonus per judgment counts these). */
  regularJudgments: number;
  /** Seconds a role-play participant waited in the lobby (absent or 0 for a rater): a wait bonus pays for them. */
  waitedSeconds?: number;
  minutes: number;
  finishedAt: string | null;
};

/**
 * All participants of a batch (preview sessions left out) in rater id order, with their provider ids, outcome,
 * decision and why, decided on figures the analysis worker brought up to date first. Null when there is no batch.
 */
export async function listDecidedParticipants(
  db: Db,
  batchId: number,
  options: { clock: () => Date; lookup?: RaterQualityLookup },
): Promise<DecidedParticipant[] | null> {
  const row = getBatchRow(db, batchId);
  if (!row) return null;
  const lookup = options.lookup ?? createRaterQualityLookup(db);
  const figureOf = await currentFigures(db, batchId, { lookup, clock: options.clock });
  if (!figureOf) return null;
  const q = qualityContextOf(db, batchId, readBatchSettings(row).onboarding?.threshold ?? null, lookup);
  const decided: DecidedParticipant[] = [];
  for (let after = 0; ; ) {
    const part = listParticipantsAfter(db, batchId, after, PARTICIPANTS_PART);
    for (const r of part) {
      const p = participantOf(r, q, figureOf);
      const d = decideParticipant(p);
      decided.push({
        raterId: r.id,
        provider: r.provider,
        participantId: r.participant_id,
        studyId: r.study_id,
        sessionId: r.session_id,
        judge: p.judge,
        status: r.status,
        outcome: outcomeOf(r.status),
        excluded: r.excluded === 1,
        exclusionReason: r.exclusion_reason,
        decision: d.decision,
        why: d.why,
        regularJudgments: r.regular_judgments,
        waitedSeconds: Math.round((r.waited_ms ?? 0) / 1000),
        minutes: minutesSpent(r),
        finishedAt: r.finished_at,
      });
    }
    const last = part.at(-1);
    if (!last || part.length < PARTICIPANTS_PART) return decided;
    after = last.id;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
