import type { QualityFlags } from '../analysis/rater-quality.js';
import type { QualityState } from './rater-quality-lookup.js';
import type { ParticipantRater } from './participants.queries.js';

// Which payment list a participant belongs on: one rule for the console's payment lists and the platforms' settle
// commands (Prolific, MTurk), so the two never disagree.

export const OUTCOMES: Record<string, string> = {
  completed: 'completed',
  screened_out: 'screened out',
  withdrew: 'withdrew',
  no_consent: 'no consent',
};

export function outcomeOf(status: string): string {
  return OUTCOMES[status] ?? 'in progress';
}

export function minutesSpent(rater: Pick<ParticipantRater, 'created_at' | 'last_seen_at' | 'finished_at'>): number {
  const end = Date.parse(rater.finished_at ?? rater.last_seen_at);
  return Math.max(0, Math.round((end - Date.parse(rater.created_at)) / 6000) / 10);
}

export const DECISIONS = ['approve', 'review', 'reject', 'pending'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * A participant as the payment lists need them: the rater row, its `judge` pseudonym, the quality flags and whether
 * the quality figures behind them are known (src/recruiting/rater-quality-lookup.ts). `signals`: the quality-signal
 * flags to look at (issue 43), in words; they decide nothing here.
 */
export type ParticipantRow = { rater: ParticipantRater; judge: string; flags: QualityFlags; quality: QualityState; signals?: readonly string[] };

/** What a decision reads of a participant. */
export type DecisionInput = {
  rater: Pick<ParticipantRater, 'excluded' | 'status' | 'exclusion_reason' | 'finish_reason' | 'regular_judgments'> & { live_outcome?: string | null };
  flags: QualityFlags;
  quality: QualityState;
};

const FLAG_NAMES: [keyof QualityFlags, string][] = [
  ['tooFast', 'too fast'],
  ['oneSided', 'one side'],
  ['failsChecks', 'failed a check'],
];

/**
 * Which payment list a participant belongs on, and why (issue 10). `approve`: completed, not excluded, no quality
 * flag — including a rater whose batch was closed or paused while they worked (they got the `partial` code for the
 * work they did). `reject`: excluded by a researcher or screened out by the onboarding or attention checks — their
 * judgments are not used, and they are never in bulk approve or bonus (the provider's own rules on rejecting apply;
 * a screened-out code set up as a paid screen-out in Prolific is settled there). `review`: everyone else needs a
 * person's look first — completed but flagged, completed without a single regular judgment (their reserved pairs
 * lapsed while they were away and nothing was left), still without an outcome, or withdrawn (they were asked to
 * return the study). `pending` (issue 12): completed, no failed check, but their quality figures are not computed yet
 * (the analysis worker computes them): "too fast" and "one side" are unknown, so neither approve nor review is said.
 */
export function decideParticipant(p: DecisionInput): { decision: Decision; why: string } {
  const r = p.rater;
  if (r.excluded === 1 && r.status === 'screened_out' && (r.exclusion_reason === 'onboarding' || r.exclusion_reason === 'attention')) {
    return { decision: 'reject', why: `screened out by the ${r.exclusion_reason === 'onboarding' ? 'onboarding' : 'attention checks'}` };
  }
  if (r.status === 'withdrew' || r.status === 'no_consent') return { decision: 'review', why: r.status === 'withdrew' ? 'withdrew (asked to return the study)' : 'declined consent (asked to return the study)' };
  if (r.excluded === 1) return { decision: 'reject', why: `excluded: ${r.exclusion_reason ?? 'no reason given'}` };
  if (r.live_outcome) return decidePlayer(r.status, r.live_outcome);
  if (r.status === 'screened_out') return { decision: 'reject', why: 'screened out' };
  if (r.status !== 'completed') return { decision: 'review', why: 'no outcome yet (still working, or left without finishing)' };
  // The names are built only for a flagged participant: the participants page decides every completed rater of a batch.
  if (p.flags.tooFast || p.flags.oneSided || p.flags.failsChecks) {
    const flagged = FLAG_NAMES.filter(([key]) => p.flags[key]).map(([, name]) => name);
    return { decision: 'review', why: `completed, flagged: ${flagged.join(', ')}` };
  }
  if (p.quality === 'pending') return { decision: 'pending', why: 'completed; quality figures (too fast, one side) being computed' };
  if (r.finish_reason === 'closed' || r.finish_reason === 'paused') {
    return { decision: 'approve', why: `worked until the batch was ${r.finish_reason} (given the partial code)` };
  }
  // A finish reason is recorded since issue 10; a rater finished before that is judged as before.
  if (r.finish_reason !== null && r.regular_judgments === 0) return { decision: 'review', why: 'completed without a regular judgment (nothing was left for them)' };
  return { decision: 'approve', why: 'completed' };
}

/**
 * A role-play participant's list (issue 52; docs/researcher/roleplay.md, "Pay"): paid whenever they did their part,
 * however the conversation ended for reasons not theirs (Mephisto pays the worker who stayed when a partner leaves;
 * waiting that found no partner is time given to the study). What they ended themselves is looked at by a person
 * first, never rejected here.
 */
const PLAYER_OUTCOMES: Record<string, { decision: Decision; why: string }> = {
  finished: { decision: 'approve', why: 'completed the conversation' },
  partner_left: { decision: 'approve', why: 'their partner left the conversation (paid in full)' },
  no_partner: { decision: 'approve', why: 'no partner came within the wait (paid for waiting)' },
  reported: { decision: 'approve', why: 'reported their partner, which ended the conversation' },
  closed: { decision: 'approve', why: 'the batch closed while they waited' },
  timed_out: { decision: 'review', why: 'let two turns in a row pass, which ended the conversation' },
  left_early: { decision: 'review', why: 'left the conversation before its minimum of turns' },
  was_reported: { decision: 'review', why: 'was reported by their partner' },
  away: { decision: 'review', why: 'closed the page for too long (their partner was paid)' },
};

function decidePlayer(status: string, outcome: string): { decision: Decision; why: string } {
  const known = PLAYER_OUTCOMES[outcome] ?? { decision: 'review', why: outcome };
  if (status !== 'completed') return { decision: 'review', why: `${known.why}; no completion code shown` };
  return known;
}
