import { stringify } from 'csv-stringify/sync';
import { neutraliseCsvCell } from '../analysis/csv-cell.js';
import type { QualityFlags } from '../analysis/rater-quality.js';
import type { QualityState } from './rater-quality-lookup.js';
import type { ParticipantRater } from './rater-table.queries.js';

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
 * the quality figures behind them are known (src/console/rater-quality-lookup.ts).
 */
/** `signals`: the quality-signal flags to look at (issue 43), in words; they decide nothing here. */
export type ParticipantRow = { rater: ParticipantRater; judge: string; flags: QualityFlags; quality: QualityState; signals?: readonly string[] };

/** What a decision reads of a participant. */
export type DecisionInput = {
  rater: Pick<ParticipantRater, 'excluded' | 'status' | 'exclusion_reason' | 'finish_reason' | 'regular_judgments'>;
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

export const PARTICIPANT_FORMS = ['full', ...DECISIONS, 'bonus'] as const;
export type ParticipantForm = (typeof PARTICIPANT_FORMS)[number];

/**
 * The participant lists as a study owner needs them. `approve`, `review`, `reject`, `pending`: one participant id per line
 * (`approve` is pasted into Prolific's bulk approve). `bonus`: `participant_id,amount` lines without a header, as
 * Prolific's bulk bonus payment takes them, for the approve list only. `full`: every participant with their `judge`
 * pseudonym, outcome, decision and why, time and check results. A long list is written in parts: `header: false` for
 * every part of `full` after the first.
 */
export function participantsCsv(participants: Iterable<ParticipantRow>, form: ParticipantForm, bonusAmount?: string, options: { header?: boolean } = {}): string {
  // Plain literals, no spreads: one per participant of the batch (50,000 in the benchmark's batch).
  const decided = Array.from(participants, (p) => {
    const d = decideParticipant(p);
    return { rater: p.rater, judge: p.judge, decision: d.decision, why: d.why, signals: p.signals ?? [] };
  });
  if (form === 'approve' || form === 'review' || form === 'reject' || form === 'pending') {
    const ids = decided.filter((p) => p.decision === form && p.rater.participant_id).map((p) => p.rater.participant_id);
    return ids.join('\n') + (ids.length > 0 ? '\n' : '');
  }
  if (form === 'bonus') {
    const approved = decided.filter((p) => p.decision === 'approve' && p.rater.participant_id);
    return stringify(approved.map((p) => [p.rater.participant_id, bonusAmount ?? '0.00']), { cast: { string: neutraliseCsvCell } });
  }
  return stringify(
    decided.map(({ rater: r, judge, decision, why, signals }) => ({
      participant_id: r.participant_id ?? '',
      judge,
      study_id: r.study_id ?? '',
      session_id: r.session_id ?? '',
      provider: r.provider,
      outcome: outcomeOf(r.status),
      decision,
      why,
      minutes: minutesSpent(r),
      attention_checks_answered: r.attention_answered,
      attention_checks_failed: r.attention_failures,
      onboarding_correct: r.onboarding_correct,
      onboarding_answered: r.onboarding_answered,
      excluded: r.excluded,
      exclusion_reason: r.exclusion_reason ?? '',
      signals: signals.join('; '),
    })),
    {
      cast: { string: neutraliseCsvCell },
      header: options.header ?? true,
      columns: [
        'participant_id',
        'judge',
        'study_id',
        'session_id',
        'provider',
        'outcome',
        'decision',
        'why',
        'minutes',
        'attention_checks_answered',
        'attention_checks_failed',
        'onboarding_correct',
        'onboarding_answered',
        'excluded',
        'exclusion_reason',
        'signals',
      ],
    },
  );
}
