import { stringify } from 'csv-stringify/sync';
import { neutraliseCsvCell } from '../analysis/csv-cell.js';
import { decideParticipant, DECISIONS, outcomeOf, minutesSpent, type ParticipantRow } from '../recruiting/participant-decision.js';

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
