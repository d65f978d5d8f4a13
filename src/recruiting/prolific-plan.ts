import type { BonusSettings, BatchSettings, WaitBonusSettings } from '../batches/batch.schema.js';
import { minorOf } from '../batches/prolific-pay.js';
import type { DecidedParticipant } from './decided-participants.js';
import type { NewStudy } from './prolific-client.js';
import { participantOfSubmission, type ProlificSubmission } from './prolific.schema.js';

// What `prolific publish` asks for and what `prolific settle` does, computed from simarena's data and Prolific's
// submissions without touching either: the settle's plan is printed by --dry-run and shown on the console before the
// single button.

// Money formatting moved to batches/prolific-pay.ts (the launch checklist holds a batch to the same rules); kept here
// for the MTurk modules that import it from this file.
export { formatMinor, majorText } from '../batches/prolific-pay.js';

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

/** A writing batch's public title (issue 53): what the participant does, never which conditions it feeds. */
export const PROLIFIC_WRITE_TITLE = 'Write a short conversation between two characters';

/** Devices the rater pages support: two transcripts side by side need a screen at least a tablet wide. */
export const RATER_DEVICES: NewStudy['device_compatibility'] = ['desktop', 'tablet'];

/** The writing page is one column of turns, tested at a phone's width (test/e2e/write-study.browser.test.ts). */
export const WRITER_DEVICES: NewStudy['device_compatibility'] = ['desktop', 'tablet', 'mobile'];

/** A batch's public title by its task: its Prolific study's name and its MTurk HIT's title (mturk-plan.ts). */
export const STUDY_TITLES = { rate: PROLIFIC_STUDY_TITLE, roleplay: PROLIFIC_ROLEPLAY_TITLE, write: PROLIFIC_WRITE_TITLE } as const;

/** The study Prolific is asked to create for a batch. */
export function prolificStudyRequest(
  batch: { publicId: string; settings: BatchSettings },
  options: { studyUrl: string; places: number; minutes: number; rewardMinor: number },
): NewStudy {
  const s = batch.settings;
  const codes = s.provider.completionCodes;
  const completion_codes: NewStudy['completion_codes'] = [];
  // A completion code is {code, code_type, actor, actions} (docs.prolific.com, the study object and "Create a draft
  // study", whose code_type values are COMPLETED, FAILED_ATTENTION_CHECK, FOLLOW_UP_STUDY, GIVE_BONUS,
  // INCOMPATIBLE_DEVICE, NO_CONSENT, OTHER and FIXED_SCREENOUT). Every code's actor is the participant: they enter it
  // when simarena sends them back, and Prolific applies its actions then. Every completed code is reviewed: `prolific
  // settle` approves from simarena's decision (quality flags and exclusions are looked at first), never Prolific's
  // automatic approval.
  if (codes.completed) completion_codes.push({ code: codes.completed, code_type: 'COMPLETED', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  if (codes.partial && codes.partial !== codes.completed) completion_codes.push({ code: codes.partial, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  // Role-play: the participant for whom no partner came is paid (reviewed and approved by settle like a completion).
  if (codes.noPartner && codes.noPartner !== codes.completed) completion_codes.push({ code: codes.noPartner, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'MANUALLY_REVIEW' }] });
  if (codes.screenedOut) {
    // A screened-out participant is never rejected (Prolific's rules on screening): a paid screen-out when the batch
    // sets its payment, else they are asked to return the study. The paid screen-out is Prolific's fixed screen-out
    // payment (in pence / cents, with the most screen-outs it pays: "New custom screening", July 2025); a study takes
    // one such code, and Prolific's COMPLETE transition takes only a researcher's code (docs.prolific.com, "Approve or
    // reject a submission"), so settle cannot screen out on a participant's behalf: one who did not enter the code is
    // listed for review (planSettle).
    completion_codes.push(
      s.provider.screenOutPay
        ? { code: codes.screenedOut, code_type: 'FIXED_SCREENOUT', actor: 'participant', actions: [{ action: 'FIXED_SCREEN_OUT_PAYMENT', fixed_screen_out_reward: minorOf(s.provider.screenOutPay), slots: options.places }] }
        : { code: codes.screenedOut, code_type: 'OTHER', actor: 'participant', actions: [{ action: 'REQUEST_RETURN' }] },
    );
  }
  if (codes.noConsent) completion_codes.push({ code: codes.noConsent, code_type: 'NO_CONSENT', actor: 'participant', actions: [{ action: 'REQUEST_RETURN' }] });
  return {
    name: STUDY_TITLES[s.task],
    internal_name: internalStudyName(batch.publicId),
    description: s.instructions.trim() || s.question,
    external_study_url: options.studyUrl,
    prolific_id_option: 'url_parameters',
    completion_codes,
    total_available_places: options.places,
    estimated_completion_time: Math.max(1, Math.ceil(options.minutes)),
    reward: options.rewardMinor,
    device_compatibility: s.task === 'write' ? WRITER_DEVICES : RATER_DEVICES,
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

/**
 * When Prolific approves a submission that still awaits review by itself, paying the full reward: "All submissions on
 * Prolific are set to automatically approve on the 21st day (just after midnight GMT) from when they're made", which
 * "may be approved after 20 days in some US timezones" (Prolific researcher help centre, "When should I approve
 * submissions and pay participants?"; docs.prolific.com, Submissions guide: "automatically approved after 21 days").
 * Read as midnight UTC starting the 21st day after the day of completion; null without a completion time.
 */
export function autoApprovalAt(completedAt: string | null | undefined): string | null {
  if (!completedAt) return null;
  const d = new Date(completedAt);
  if (Number.isNaN(d.getTime())) return null;
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 21)).toISOString();
}

/** A time as people read it on a page or a terminal: "2026-03-02 00:00 UTC". */
export function formatUtc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export type PlannedParticipant = { participantId: string; submissionId: string; raterId: number; why: string };
export type PlannedBonus = PlannedParticipant & { amountMinor: number };
export type Mismatch = { participantId: string | null; submissionId: string | null; problem: string };
/** Left to a person, with the submission's status on Prolific and, while it awaits review, when Prolific approves it itself. */
export type ReviewItem = Omit<PlannedParticipant, 'submissionId'> & { submissionId: string | null; status: string | null; autoApprovalAt: string | null };
/** A submission awaiting review that settle does not approve: Prolific approves it at `autoApprovalAt` unless someone decides first. */
export type Deadline = { participantId: string | null; submissionId: string; autoApprovalAt: string; why: string };

export type SettlePlan = {
  /** Awaiting review on Prolific: approved now (again, when an earlier bulk approve left them awaiting review). */
  approve: PlannedParticipant[];
  /** Prolific is processing their approval (PROCESSING): neither approved again nor counted done. */
  inFlight: PlannedParticipant[];
  returns: PlannedParticipant[];
  review: ReviewItem[];
  bonus: PlannedBonus[];
  /** Final on Prolific (approved, screened out, returned...) or needing nothing more from settle. */
  done: number;
  mismatches: Mismatch[];
  /** Every submission awaiting review that settle leaves, soonest first: each is approved by Prolific itself then. */
  deadlines: Deadline[];
};

/** What an earlier settle sent that Prolific's list may not show: return requests, and bonuses set up (paid once each). */
export type Covered = { returns: Set<string>; bonus: Set<string> };

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

/** Statuses after which Prolific changes nothing more ("Once the status is changed, it can not be restored"). */
const FINAL = ['APPROVED', 'REJECTED', 'RETURNED', 'TIMED-OUT', 'SCREENED OUT', 'PARTIALLY APPROVED'];

type Step = { plan: SettlePlan; settings: BatchSettings; covered: Covered; p: DecidedParticipant; s: ProlificSubmission; item: PlannedParticipant };

const review = (step: Step, why: string): void => void step.plan.review.push({ ...step.item, status: step.s.status, why, autoApprovalAt: step.s.status === 'AWAITING REVIEW' ? autoApprovalAt(step.s.completed_at) : null });

function planApproval(step: Step): void {
  const { plan, s, item } = step;
  if (s.status === 'APPROVED') plan.done++;
  else if (s.status === 'AWAITING REVIEW') plan.approve.push(item);
  else if (s.status === 'PROCESSING') plan.inFlight.push(item);
  else return review(step, `${item.why}; the submission is ${s.status} on Prolific, so it cannot be approved`);
  const amount = participantBonusMinor(step.settings, step.p);
  if (amount > 0 && !step.covered.bonus.has(item.participantId)) plan.bonus.push({ ...item, amountMinor: amount });
}

function planScreenOut(step: Step): void {
  const { s, item } = step;
  if (s.status === 'SCREENED OUT') return void step.plan.done++;
  const code = step.settings.provider.completionCodes.screenedOut ?? '';
  review(
    step,
    `${item.why}; Prolific screens out (and pays the screen-out payment) only a participant who enters the screen-out code ${code} themselves, and the submission is ${s.status}: ask them to enter it, or pay them by hand`,
  );
}

function planReturn(step: Step): void {
  const { plan, s, item } = step;
  if (FINAL.includes(s.status)) return void plan.done++;
  const asked = s.return_requested ?? (step.covered.returns.has(item.participantId) ? 'earlier' : null);
  if (!asked) {
    if (s.status === 'AWAITING REVIEW' || s.status === 'ACTIVE') plan.returns.push(item);
    else review(step, `${item.why}; the submission is ${s.status} on Prolific`);
    return;
  }
  // Asking is not returning: a submission still awaiting review is approved (and paid in full) by Prolific on day 21.
  const when = asked === 'earlier' ? '' : ` on ${formatUtc(asked)}`;
  review(step, `${item.why}; asked to return${when} and not returned yet`);
}

/**
 * What settle will do, participant by participant, from Prolific's state: done is what Prolific shows final (an
 * approval counts only once the submission is APPROVED, since bulk approve is asynchronous), and every submission left
 * awaiting review carries the day Prolific approves it itself.
 */
export function planSettle(
  participants: readonly DecidedParticipant[],
  submissions: readonly ProlificSubmission[],
  settings: BatchSettings,
  covered: Covered,
): SettlePlan {
  const { pairs, mismatches } = matchSubmissions(participants, submissions, settings);
  const plan: SettlePlan = { approve: [], inFlight: [], returns: [], review: [], bonus: [], done: 0, mismatches, deadlines: [] };
  const paidScreenOut = settings.provider.screenOutPay !== undefined;
  for (const { participant: p, submission: s } of pairs) {
    const { action, why } = prolificActionOf(p, paidScreenOut);
    const base = { participantId: p.participantId as string, raterId: p.raterId, why };
    if (!s) {
      if (action !== 'review' && !['completed', 'screened_out'].includes(p.status)) continue;
      plan.review.push({ ...base, submissionId: null, status: null, why: `${why}; no submission on Prolific`, autoApprovalAt: null });
      continue;
    }
    const step: Step = { plan, settings, covered, p, s, item: { ...base, submissionId: s.id } };
    if (action === 'review') review(step, why);
    else if (action === 'approve') planApproval(step);
    else if (action === 'screen_out') planScreenOut(step);
    else planReturn(step);
  }
  plan.deadlines = deadlinesOf(plan, submissions);
  return plan;
}

/** Every submission awaiting review that the plan does not approve now, with when Prolific approves it itself. */
function deadlinesOf(plan: SettlePlan, submissions: readonly ProlificSubmission[]): Deadline[] {
  const approving = new Set(plan.approve.map((a) => a.submissionId));
  const whyOf = new Map<string, string>();
  for (const r of plan.review) if (r.submissionId) whyOf.set(r.submissionId, r.why);
  for (const r of plan.returns) whyOf.set(r.submissionId, `${r.why}; asked to return now`);
  for (const m of plan.mismatches) if (m.submissionId && !whyOf.has(m.submissionId)) whyOf.set(m.submissionId, m.problem);
  const out: Deadline[] = [];
  for (const s of submissions) {
    const at = autoApprovalAt(s.completed_at);
    if (s.status !== 'AWAITING REVIEW' || approving.has(s.id) || !at) continue;
    out.push({ participantId: participantOfSubmission(s), submissionId: s.id, autoApprovalAt: at, why: whyOf.get(s.id) ?? 'awaiting review' });
  }
  return out.sort((x, y) => x.autoApprovalAt.localeCompare(y.autoApprovalAt));
}

/** Splits a list into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
