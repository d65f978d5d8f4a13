import { createHash } from 'node:crypto';
import type { BatchSettings, MturkSettings } from '../batches/batch.schema.js';
import { mturkSchema } from '../batches/batch.schema.js';
import { parsePay } from '../batches/pay.js';
import type { DecidedParticipant } from './decided-participants.js';
import { majorText, participantBonusMinor, STUDY_TITLES } from './prolific-plan.js';

// What `mturk publish` asks MTurk for and what `mturk settle` does, computed from simarena's data and MTurk's
// assignments without touching either: printed by --dry-run and shown on the console before its button.

/** MTurk's system qualification types (its reference, "QualificationRequirement"). */
export const MTURK_QUALIFICATIONS = { approvalRate: '000000000000000000L0', approvedHits: '00000000000000000040', locale: '00000000000000000071' } as const;

/**
 * MTurk's commission (its pricing page): 20% of rewards and bonuses, at least $0.01 per assignment, and 20% more on
 * the reward of a HIT with 10 or more assignments.
 */
export const MTURK_FEE_SHARE = 0.2;
export const MTURK_LARGE_HIT_FEE_SHARE = 0.2;
export const MTURK_LARGE_HIT_ASSIGNMENTS = 10;

/** The batch's MTurk settings, MTurk's defaults when it has none. */
export function mturkSettingsOf(settings: BatchSettings): MturkSettings {
  return settings.mturk ?? mturkSchema.parse({});
}

/** MTurk pays in US dollars: the reward in cents and as MTurk's "2.00" text; null when `pay` is not in dollars. */
export function mturkReward(pay: string): { rewardMinor: number; reward: string } | null {
  const parsed = parsePay(pay);
  if (!parsed || parsed.amount <= 0 || !['$', 'USD', 'usd', 'US$'].includes(parsed.currency)) return null;
  const rewardMinor = Math.round(parsed.amount * 100);
  return { rewardMinor, reward: majorText(rewardMinor) };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The ExternalQuestion MTurk frames: the batch's public link (MTurk appends assignmentId, hitId, workerId, turkSubmitTo). */
export function externalQuestion(url: string, frameHeight: number): string {
  return [
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">',
    `  <ExternalURL>${escapeXml(url)}</ExternalURL>`,
    `  <FrameHeight>${frameHeight}</FrameHeight>`,
    '</ExternalQuestion>',
  ].join('\n');
}

export type QualificationRequirement = {
  QualificationTypeId: string;
  Comparator: 'GreaterThanOrEqualTo' | 'In' | 'DoesNotExist';
  IntegerValues?: number[];
  LocaleValues?: { Country: string }[];
  ActionsGuarded: 'DiscoverPreviewAndAccept' | 'PreviewAndAccept' | 'Accept';
};

/** The batch file's requirements, and "took part before" (the batch's own qualification) kept from even seeing the HIT. */
export function qualificationRequirements(m: MturkSettings, tookPartBefore: string | null): QualificationRequirement[] {
  const out: QualificationRequirement[] = [];
  if (m.minApprovalRate !== null) out.push({ QualificationTypeId: MTURK_QUALIFICATIONS.approvalRate, Comparator: 'GreaterThanOrEqualTo', IntegerValues: [m.minApprovalRate], ActionsGuarded: 'Accept' });
  if (m.minApprovedHits !== null) out.push({ QualificationTypeId: MTURK_QUALIFICATIONS.approvedHits, Comparator: 'GreaterThanOrEqualTo', IntegerValues: [m.minApprovedHits], ActionsGuarded: 'Accept' });
  if (m.locales.length > 0) out.push({ QualificationTypeId: MTURK_QUALIFICATIONS.locale, Comparator: 'In', LocaleValues: m.locales.map((c) => ({ Country: c })), ActionsGuarded: 'Accept' });
  if (tookPartBefore) out.push({ QualificationTypeId: tookPartBefore, Comparator: 'DoesNotExist', ActionsGuarded: 'DiscoverPreviewAndAccept' });
  return out;
}

/** The HIT type of a batch (CreateHITType's body). */
export function hitTypeRequest(batch: { settings: BatchSettings }, reward: string, tookPartBefore: string | null) {
  const m = mturkSettingsOf(batch.settings);
  const s = batch.settings;
  return {
    // When the batch sets none, the Prolific study's title for its task. Never the batch's name: workers read the title
    // in MTurk's list of HITs, and a batch's name often names the conditions or models compared (blinding).
    Title: m.title ?? STUDY_TITLES[s.task],
    Description: m.description ?? (s.instructions.trim() || s.question).slice(0, 2000),
    Keywords: m.keywords.join(', '),
    Reward: reward,
    AssignmentDurationInSeconds: m.durationMinutes * 60,
    AutoApprovalDelayInSeconds: m.autoApprovalDelayHours * 3600,
    QualificationRequirements: qualificationRequirements(m, tookPartBefore),
  };
}

/** Marks a HIT as the batch's (its RequesterAnnotation and UniqueRequestToken): how a HIT whose answer was lost is found. */
export function hitMark(batchPublicId: string, index: number): string {
  return `simarena-${batchPublicId}-hit-${index}`;
}

/** The "took part before" qualification's name: one per batch that blocks earlier batches' workers. */
export function tookPartBeforeName(batchPublicId: string): string {
  return `simarena-${batchPublicId}-took-part-before`;
}

/**
 * The bonus's UniqueRequestToken, derived from the batch and the worker (at most 64 characters, MTurk's limit): one
 * bonus per worker and batch. It guards only 24 hours on MTurk, so it is also written into the bonus's Reason, where
 * ListBonusPayments shows it for good.
 */
export function bonusToken(batchPublicId: string, workerId: string): string {
  return `sa-${createHash('sha256').update(`${batchPublicId}\n${workerId}`).digest('hex').slice(0, 40)}`;
}

/** The token bonusReason wrote into a bonus's Reason, as ListBonusPayments shows it; null in a bonus simarena did not pay. */
export function bonusTokenIn(reason: string): string | null {
  return /\(ref (sa-[0-9a-f]{40})\)/.exec(reason)?.[1] ?? null;
}

/**
 * The bonus's Reason, which the worker reads (the SendBonus reference) and MTurk emails them: neutral, never the
 * batch's name (see hitTypeRequest's title), with the token that lets ListBonusPayments show the bonus was paid.
 */
export function bonusReason(token: string): string {
  return `Bonus for your careful work in this study. Thank you! (ref ${token})`;
}

/** MTurk's fees on rewards for `assignments` assignments of a HIT, in cents. */
export function mturkFeeMinor(rewardMinor: number, assignmentsPerHit: number): number {
  const share = MTURK_FEE_SHARE + (assignmentsPerHit >= MTURK_LARGE_HIT_ASSIGNMENTS ? MTURK_LARGE_HIT_FEE_SHARE : 0);
  return Math.max(1, Math.round(rewardMinor * share));
}

/** A submitted, approved or rejected assignment as settle reads it. */
export type MturkAssignment = { assignmentId: string; workerId: string; hitId: string; status: string };
/** A rater's MTurk session: every assignment a worker entered simarena with (a multi-HIT study has several). */
export type MturkSession = { raterId: number; workerId: string; assignmentId: string };

export type MturkPlanned = { workerId: string; assignmentId: string; raterId: number; why: string };
export type MturkMismatch = { workerId: string | null; assignmentId: string | null; problem: string };
export type MturkSettlePlan = {
  approve: MturkPlanned[];
  review: (MturkPlanned & { status: string | null })[];
  bonus: (MturkPlanned & { amountMinor: number })[];
  /** Bonuses MTurk already lists (found by their ref) with no record of being paid: recorded as done, never sent. */
  alreadyPaid: (MturkPlanned & { amountMinor: number })[];
  done: number;
  mismatches: MturkMismatch[];
};

/**
 * The one MTurk action for a simarena outcome (docs/researcher/recruiting-mturk.md): completed and approved → approve;
 * everyone else → review, left untouched. Screened-out and excluded workers are never rejected automatically: a
 * rejection harms a worker's approval rate, and MTurk expects it only for work not done as asked, which a person judges.
 */
export function mturkActionOf(p: DecidedParticipant): { action: 'approve' | 'review'; why: string } {
  if (p.status === 'screened_out') return { action: 'review', why: `${p.why} (never rejected automatically)` };
  if (p.excluded) return { action: 'review', why: `${p.why} (a researcher's exclusion is never a rejection by itself)` };
  return p.decision === 'approve' ? { action: 'approve', why: p.why } : { action: 'review', why: p.why };
}

/**
 * Matches MTurk's assignments with simarena's raters by assignmentId (the session id MTurk passed in the link) and names
 * every mismatch: an assignment whose worker never reached simarena, a finished rater with no submitted assignment,
 * a worker id that differs.
 */
export function matchAssignments(participants: readonly DecidedParticipant[], sessions: readonly MturkSession[], assignments: readonly MturkAssignment[]) {
  const byRater = new Map(participants.map((p) => [p.raterId, p]));
  const sessionOf = new Map(sessions.map((s) => [s.assignmentId, s]));
  const pairs: { participant: DecidedParticipant; assignment: MturkAssignment }[] = [];
  const mismatches: MturkMismatch[] = [];
  const matchedRaters = new Set<number>();
  for (const a of assignments) {
    const session = sessionOf.get(a.assignmentId);
    const participant = session ? byRater.get(session.raterId) : undefined;
    if (!session || !participant) {
      mismatches.push({ workerId: a.workerId, assignmentId: a.assignmentId, problem: `assignment ${a.status} whose worker never reached simarena: not approved by settle (MTurk approves it by itself after the auto-approval delay unless you reject it there)` });
      continue;
    }
    if (session.workerId !== a.workerId) {
      mismatches.push({ workerId: a.workerId, assignmentId: a.assignmentId, problem: `submitted by ${a.workerId}, but simarena saw worker ${session.workerId} on it: not approved` });
      continue;
    }
    matchedRaters.add(participant.raterId);
    pairs.push({ participant, assignment: a });
  }
  for (const p of participants) {
    if (p.provider === 'mturk' && ['completed', 'screened_out'].includes(p.status) && !matchedRaters.has(p.raterId)) {
      mismatches.push({ workerId: p.participantId, assignmentId: p.sessionId, problem: `finished in simarena (${p.outcome}) but no submitted assignment on MTurk` });
    }
  }
  return { pairs, mismatches };
}

/**
 * What settle will do, assignment by assignment: approve the submitted assignments of approved raters, one bonus per
 * worker (on their last assignment) once every one of their assignments is approved, the rest left for review.
 * `covered`: assignments and workers whose approval or bonus an earlier settle already recorded; `paidOnMturk`: workers
 * MTurk already lists this batch's bonus for (ListBonusPayments), whose bonus is never sent again whatever the record.
 */
export function planMturkSettle(
  matched: ReturnType<typeof matchAssignments>,
  settings: BatchSettings,
  covered: { approve: ReadonlySet<string>; bonus: ReadonlySet<string>; paidOnMturk?: ReadonlySet<string> },
): MturkSettlePlan {
  const plan: MturkSettlePlan = { approve: [], review: [], bonus: [], alreadyPaid: [], done: 0, mismatches: matched.mismatches };
  // Each rater's last assignment to settle, with the rater (one lookup per worker: a search of every pair per worker
  // was quadratic, 1.25e9 comparisons for a batch of 50,000 workers, on the console's request thread).
  const lastOf = new Map<number, { item: MturkPlanned; participant: (typeof matched.pairs)[number]['participant'] }>();
  for (const { participant: p, assignment: a } of matched.pairs) {
    const { action, why } = mturkActionOf(p);
    const item = { workerId: a.workerId, assignmentId: a.assignmentId, raterId: p.raterId, why };
    if (action === 'review' || a.status === 'Rejected') {
      plan.review.push({ ...item, status: a.status, why: a.status === 'Rejected' ? `${why}; rejected on MTurk` : why });
      continue;
    }
    if (a.status === 'Approved' || covered.approve.has(a.assignmentId)) plan.done++;
    else plan.approve.push(item);
    lastOf.set(p.raterId, { item, participant: p });
  }
  for (const { item, participant } of lastOf.values()) {
    const amount = participantBonusMinor(settings, participant);
    if (amount > 0 && !covered.bonus.has(item.workerId)) (covered.paidOnMturk?.has(item.workerId) ? plan.alreadyPaid : plan.bonus).push({ ...item, amountMinor: amount });
  }
  return plan;
}
