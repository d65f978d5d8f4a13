import { z } from 'zod';

// Prolific's API answers as simarena reads them (https://docs.prolific.com/api-reference): only the fields used,
// unknown ones let through (the API adds fields over time).

/**
 * Submission statuses as Prolific spells them (docs.prolific.com, Count study submissions by status), and PROCESSING,
 * shown briefly while Prolific changes one (Mephisto's Prolific provider, api/constants.py).
 */
export const SUBMISSION_STATUSES = [
  'RESERVED',
  'ACTIVE',
  'TIMED-OUT',
  'AWAITING REVIEW',
  'APPROVED',
  'RETURNED',
  'REJECTED',
  'PARTIALLY APPROVED',
  'SCREENED OUT',
  'PROCESSING',
] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

export const STUDY_STATUSES = ['UNPUBLISHED', 'SCHEDULED', 'PUBLISHING', 'ACTIVE', 'AWAITING REVIEW', 'PAUSED', 'COMPLETED'] as const;

export const studySchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().optional(),
  internal_name: z.string().nullish(),
  status: z.string(),
  total_available_places: z.number().nullish(),
  places_taken: z.number().nullish(),
  reward: z.number().nullish(),
  external_study_url: z.string().nullish(),
  /** The currency of the study's reward and bonuses: its workspace's (the study object; Prolific's CLI, model/study.go). */
  currency_code: z.string().nullish(),
});
export type ProlificStudy = z.infer<typeof studySchema>;

export const submissionSchema = z.looseObject({
  id: z.string().min(1),
  participant_id: z.string().nullish(),
  participant: z.string().nullish(),
  status: z.string(),
  study_code: z.string().nullish(),
  entered_code: z.string().nullish(),
  started_at: z.string().nullish(),
  completed_at: z.string().nullish(),
  /** Bonuses paid on the submission, in pence / cents, a fixed screen-out payment among them (Retrieve a submission; only there, not in a study's list). */
  bonus_payments: z.array(z.number()).nullish(),
  return_requested: z.string().nullish(),
});
export type ProlificSubmission = z.infer<typeof submissionSchema>;

/** The participant of a submission (the list names it `participant_id`, the single read `participant`). */
export function participantOfSubmission(s: ProlificSubmission): string | null {
  return s.participant_id ?? s.participant ?? null;
}

/** A page of a list: `results`, and the next page's address in `_links.next.href` (null on the last). */
export const pageSchema = <T extends z.ZodType>(item: T) =>
  z.looseObject({
    results: z.array(item),
    _links: z.looseObject({ next: z.looseObject({ href: z.string().nullish() }).nullish() }).nullish(),
    meta: z.looseObject({ count: z.number().nullish() }).nullish(),
  });

export const bulkBonusSchema = z.looseObject({
  id: z.string().min(1),
  study: z.string().nullish(),
  amount: z.number().nullish(),
  fees: z.number().nullish(),
  vat: z.number().nullish(),
  /** What will be taken from the balance, in pence / cents. */
  total_amount: z.number().nullish(),
});
export type ProlificBulkBonus = z.infer<typeof bulkBonusSchema>;

/** A workspace of the token's user (docs.prolific.com, "Get all a user's workspaces"). */
export const workspaceSchema = z.looseObject({ id: z.string().min(1), title: z.string().nullish() });

/** "Get the balance of a workspace": currency_code is "the currency used for all financial transactions within the workspace". */
export const workspaceBalanceSchema = z.looseObject({ currency_code: z.string().nullish() });

/** A workspace's webhook secret ("Create/replace a secret": id, value, workspace_id). */
export const hookSecretSchema = z.looseObject({ id: z.string().nullish(), value: z.string().min(1), workspace_id: z.string().nullish() });

/** A subscription ("Create a subscription", "Confirm a subscription": id, event_type, target_url, is_enabled, workspace_id). */
export const hookSubscriptionSchema = z.looseObject({
  id: z.string().nullish(),
  event_type: z.string(),
  target_url: z.string(),
  is_enabled: z.boolean().nullish(),
  workspace_id: z.string().nullish(),
});

/** "Create a subscription" is documented to answer `results` (a list of subscriptions); its example shows the one made. */
export const createdSubscriptionSchema = z.looseObject({ id: z.string().nullish(), results: z.array(hookSubscriptionSchema).nullish() });

export const hookListSchema = <T extends z.ZodType>(item: T) => z.looseObject({ results: z.array(item) });

export const costSchema = z.looseObject({ total_cost: z.number() });

/** Prolific's error body: `{ error: { status, error_code, title, detail } }`, or a plain `{ detail }`. */
export const errorBodySchema = z.looseObject({
  error: z
    .looseObject({
      title: z.string().nullish(),
      detail: z.union([z.string(), z.array(z.string()), z.record(z.string(), z.unknown())]).nullish(),
    })
    .nullish(),
  detail: z.string().nullish(),
});
