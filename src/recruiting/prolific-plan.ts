import type { BonusSettings, BatchSettings, WaitBonusSettings } from '../batches/batch.schema.js';
import { parsePay } from '../batches/pay.js';
import type { DecidedParticipant } from './decided-participants.js';
import type { NewStudy } from './prolific-client.js';
import { participantOfSubmission, type ProlificSubmission } from './prolific.schema.js';

// What `prolific publish` asks for and what `prolific settle` does, computed from simarena's data and Prolific's
// submissions without touching either: the settle's plan is printed by --dry-run and shown on the console before the
// single button.

/** Prolific pays in pounds or dollars (a workspace's currency). */
const PROLIFIC_CURRENCIES: Record<string, 'GBP' | 'USD'> = { '£': 'GBP', GBP: 'GBP', gbp: 'GBP', $: 'USD', USD: 'USD', usd: 'USD' };

/** The batch's pay in Prolific's terms: the currency and the reward in minor units (pence, cents); null when unusable. */
export function prolificReward(pay: string): { currency: 'GBP' | 'USD'; rewardMinor: number } | null {
  const parsed = parsePay(pay);
  if (!parsed || parsed.amount <= 0) return null;
  const currency = PROLIFIC_CURRENCIES[parsed.currency];
  return currency ? { currency, rewardMinor: Math.round(parsed.amount * 100) } : null;
}

/** A decimal amount in major units ("0.50") in minor units (50). */
export function minorOf(amount: string): number {
  return Math.round(Number(amount) * 100);
}

/** Minor units as the decimal major-unit text Prolific's bonus lines take ("0.50"). */
export function majorText(minor: number): string {
  return (minor / 100).toFixed(2);
}

export function formatMinor(minor: number, currency: string): string {
  return `${majorText(minor)} ${currency}`;
}

/** A participant's bonus in minor units: the fixed amount plus the per-judgment amount times their regular judgments. */
export function bonusMinor(bonus: BonusSettings | null, regularJudgments: number): number {
  if (!bonus) return 0;
  return (bonus.fixed ? minorOf(bonus.fixed) : 0) + (bonus.perJudgment ? minorOf(bonus.perJudgment) * regularJudgments : 0);
}

/**
 * A role-play participant's bonus for waiting (issue 52): `perMinute` for each minute begun in the lobby after the
 * first `afterSeconds`. Waiting counts toward the promised time and pay; a long wait is paid on top.
 */
export function waitBonusMinor(waitBonus: WaitBonusSettings | null, waitedSeconds: number): number {
  if (!waitBonus) return 0;
  return Math.ceil(Math.max(0, waitedSeconds - waitBonus.afterSeconds) / 60) * minorOf(waitBonus.perMinute);
}

/** Every bonus an approved participant is paid, in minor units: the batch's bonus and, role-playing, the wait bonus. */
export function participantBonusMinor(settings: BatchSettings, p: Pick<DecidedParticipant, 'regularJudgments' | 'waitedSeconds'>): number {
  return bonusMinor(settings.bonus, p.regularJudgments) + waitBonusMinor(settings.partner?.waitBonus ?? null, p.waitedSeconds ?? 0);
}

/**
 * The study's public title. Not the batch's name: participants read the title, and a batch's name often names the
 * conditions or models compared (blinding: nothing a rater sees may reveal them).
 */
export const PROLIFIC_STUDY_TITLE = 'Compare pairs of short conversations';

/** A role-play batch's public title: it says the study is live (a partner waits for them), never who the partner is. */
export const PROLIFIC_ROLEPLAY_TITLE = 'Chat live with a partner in a short role-play';

/** Devices the rater pages support: two transcripts side by side need a screen at least a tablet wide. */
export const RATER_DEVICES: NewStudy['device_compatibility'] = ['desktop', 'tablet'];

/** The study Prolific is asked to create for a batch. */
export function prolificStudyRequest(
  batch: { publicId: string; settings: BatchSettings },
  options: { studyUrl: string; places: number; minutes: number; rewardMinor: number },
): NewStudy {
  const s = batch.settings;
  const codes = s.provider.completionCodes;
  const completion_codes: NewStudy['completion_codes'] = [];
  // Every code is reviewed: `prolific settle` approves from simarena's decision (quality flags and exclusions are
  // looked at first), never Prolific's automatic approval.
  if (codes.completed) completion_codes.push({ code: codes.completed, code_type: 'COMPLETED', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  if (codes.partial && codes.partial !== codes.completed) completion_codes.push({ code: codes.partial, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  // Role-play: the participant for whom no partner came is paid (reviewed and approved by settle like a completion).
  if (codes.noPartner && codes.noPartner !== codes.completed) completion_codes.push({ code: codes.noPartner, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  if (codes.screenedOut) {
    // A screened-out participant is never rejected (Prolific's rules on screening): a paid screen-out when the batch
    // sets its payment, else they are asked to return the study.
    completion_codes.push(
      s.provider.screenOutPay
        ? { code: codes.screenedOut, code_type: 'FIXED_SCREEN_OUT', actor: 'participant', actions: [{ action: 'FIXED_SCREEN_OUT_PAYMENT', fixed_screen_out_reward: minorOf(s.provider.screenOutPay), slots: options.places }] }
        : { code: codes.screenedOut, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'REQUEST_RETURN' }] },
    );
  }
  if (codes.noConsent) completion_codes.push({ code: codes.noConsent, code_type: 'NO_CONSENT', actor: 'participant', actions: [{ action: 'REQUEST_RETURN' }] });
  return {
    name: s.task === 'roleplay' ? PROLIFIC_ROLEPLAY_TITLE : PROLIFIC_STUDY_TITLE,
    internal_name: internalStudyName(batch.publicId),
    description: s.instructions.trim() || s.question,
    external_study_url: options.studyUrl,
    prolific_id_option: 'url_parameters',
    completion_codes,
    total_available_places: options.places,
    estimated_completion_time: Math.max(1, Math.ceil(options.minutes)),
    reward: options.rewardMinor,
    device_compatibility: RATER_DEVICES,
    peripheral_requirements: [],
  };
}

/** The study's internal name (never shown to participants): how a study whose creation answer was lost is found again. */
export function internalStudyName(batchPublicId: string): string {
  return `simarena-${batchPublicId}`;
}

/** The one Prolific action for a simarena outcome (docs/researcher/recruiting.md, "What settle does"). */
export type ProlificAction = 'approve' | 'screen_out' | 'return' | 'review';

export function prolificActionOf(p: DecidedParticipant, paidScreenOut: boolean): { action: ProlificAction; why: string } {
  if (p.status === 'screened_out') return { action: paidScreenOut ? 'screen_out' : 'return', why: p.why };
  if (p.status === 'withdrew' || p.status === 'no_consent') return { action: 'return', why: p.why };
  if (p.excluded) return { action: 'review', why: `${p.why} (a researcher's exclusion is reviewed on Prolific, never rejected automatically)` };
  if (p.decision === 'approve') return { action: 'approve', why: p.why };
  return { action: 'review', why: p.why };
}

export type PlannedParticipant = { participantId: string; submissionId: string; raterId: number; why: string };
export type PlannedBonus = PlannedParticipant & { amountMinor: number };
export type Mismatch = { participantId: string | null; submissionId: string | null; problem: string };

export type SettlePlan = {
  approve: PlannedParticipant[];
  screenOut: PlannedParticipant[];
  returns: PlannedParticipant[];
  review: (Omit<PlannedParticipant, 'submissionId'> & { submissionId: string | null; status: string | null })[];
  bonus: PlannedBonus[];
  /** Already done on Prolific or by an earlier settle. */
  done: number;
  mismatches: Mismatch[];
};

export type Covered = { approve: Set<string>; screenOut: Set<string>; returns: Set<string>; bonus: Set<string> };

/** The code simarena showed for an outcome, which a submission should carry. */
function expectedCodes(settings: BatchSettings, status: string): string[] {
  const c = settings.provider.completionCodes;
  // A role-play participant for whom no partner came was shown the "no partner" code instead.
  if (status === 'completed') return [c.completed, c.partial, c.noPartner].filter((x): x is string => !!x);
  if (status === 'screened_out') return c.screenedOut ? [c.screenedOut] : [];
  if (status === 'no_consent') return c.noConsent ? [c.noConsent] : [];
  return [];
}

/**
 * Matches Prolific's submissions with simarena's participants (by the session id Prolific passed, else by participant
 * id) and names every mismatch: a submission whose participant never reached simarena, a finished rater with no
 * submission, a completion code that differs.
 */
export function matchSubmissions(participants: readonly DecidedParticipant[], submissions: readonly ProlificSubmission[], settings: BatchSettings) {
  const bySession = new Map(submissions.map((s) => [s.id, s]));
  const byParticipant = new Map(submissions.map((s) => [participantOfSubmission(s), s]));
  const matched = new Map<string, DecidedParticipant>();
  const pairs: { participant: DecidedParticipant; submission: ProlificSubmission | null }[] = [];
  const mismatches: Mismatch[] = [];
  for (const p of participants) {
    if (p.provider !== 'prolific' || !p.participantId) continue;
    const submission = (p.sessionId ? bySession.get(p.sessionId) : undefined) ?? byParticipant.get(p.participantId) ?? null;
    if (submission) matched.set(submission.id, p);
    pairs.push({ participant: p, submission });
    const finished = ['completed', 'screened_out'].includes(p.status);
    if (!submission && finished) mismatches.push({ participantId: p.participantId, submissionId: p.sessionId, problem: `finished in simarena (${p.outcome}) but has no submission on Prolific` });
    const entered = submission?.entered_code ?? submission?.study_code ?? null;
    const expected = expectedCodes(settings, p.status);
    if (submission && entered && expected.length > 0 && !expected.includes(entered)) {
      mismatches.push({ participantId: p.participantId, submissionId: submission.id, problem: `entered code ${entered}, simarena gave ${expected.join(' or ')}` });
    }
  }
  for (const s of submissions) {
    if (!matched.has(s.id) && !['RETURNED', 'TIMED-OUT', 'RESERVED'].includes(s.status)) {
      mismatches.push({ participantId: participantOfSubmission(s), submissionId: s.id, problem: `submission ${s.status} whose participant never reached simarena: not approved` });
    }
  }
  return { pairs, mismatches };
}

/** What settle will do, participant by participant, leaving out what Prolific or an earlier settle already did. */
export function planSettle(
  participants: readonly DecidedParticipant[],
  submissions: readonly ProlificSubmission[],
  settings: BatchSettings,
  covered: Covered,
): SettlePlan {
  const { pairs, mismatches } = matchSubmissions(participants, submissions, settings);
  const plan: SettlePlan = { approve: [], screenOut: [], returns: [], review: [], bonus: [], done: 0, mismatches };
  const paidScreenOut = settings.provider.screenOutPay !== undefined;
  for (const { participant: p, submission: s } of pairs) {
    const { action, why } = prolificActionOf(p, paidScreenOut);
    const id = p.participantId as string;
    const base = { participantId: id, raterId: p.raterId, why };
    const status = s?.status ?? null;
    if (action === 'review' || !s) {
      if (action !== 'review' && !s && !['completed', 'screened_out'].includes(p.status)) continue;
      plan.review.push({ ...base, submissionId: s?.id ?? null, status, why: s ? why : `${why}; no submission on Prolific` });
      continue;
    }
    const item = { ...base, submissionId: s.id };
    if (action === 'approve') {
      if (status === 'APPROVED' || covered.approve.has(id)) plan.done++;
      else if (status === 'AWAITING REVIEW') plan.approve.push(item);
      else {
        plan.review.push({ ...item, status, why: `${why}; the submission is ${status} on Prolific, so it cannot be approved` });
        continue;
      }
      const amount = participantBonusMinor(settings, p);
      if (amount > 0 && !covered.bonus.has(id)) plan.bonus.push({ ...item, amountMinor: amount });
    } else if (action === 'screen_out') {
      if (status === 'SCREENED OUT' || covered.screenOut.has(id)) plan.done++;
      else if (status === 'AWAITING REVIEW' || status === 'ACTIVE') plan.screenOut.push(item);
      else plan.review.push({ ...item, status, why: `${why}; the submission is ${status} on Prolific` });
    } else {
      if (status === 'RETURNED' || status === 'TIMED-OUT' || s.return_requested || covered.returns.has(id)) plan.done++;
      else if (status === 'AWAITING REVIEW' || status === 'ACTIVE') plan.returns.push(item);
      else plan.review.push({ ...item, status, why: `${why}; the submission is ${status} on Prolific` });
    }
  }
  return plan;
}

/** Splits a list into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
