import { z } from 'zod';
import { parseCondition } from '../generation/mode.js';
import { SPENDING_FAMILIES } from '../numbers/group-sequential.js';

// One schema for a batch's settings, shared by `simarena batches create --from FILE.json`, the console's form
// and the stored `batches.settings` JSON, so the three can never disagree.

export const DEFAULT_QUESTION = 'Which one sounds more like a natural interaction that two people would have in this scenario?';

const conditionSchema = z
  .string()
  .trim()
  .refine((text) => parseCondition(text) !== null, 'must be a condition written MODE:model, e.g. AGENTS:gpt-4o-mini')
  .transform((text) => {
    const condition = parseCondition(text);
    return condition ? `${condition.mode}:${condition.model}` : text;
  });

const comparisonSchema = z
  .tuple([conditionSchema, conditionSchema])
  .refine(([a, b]) => a !== b, 'a comparison needs two different conditions');

const codeSchema = z.string().trim().min(1).max(64);

/** An amount in the batch's currency, in major units with at most two decimals ("0.50"), as Prolific's bonus lines take it. */
export const moneyAmountSchema = z
  .string()
  .trim()
  .regex(/^\d{1,4}(\.\d{1,2})?$/, 'must be an amount like 0.50 (in the batch currency)');

/**
 * A bonus on top of `pay` for each approved participant (issue 41), in the batch's currency: a fixed amount, an amount
 * per regular judgment, or both added.
 */
export const bonusSchema = z
  .strictObject({ fixed: moneyAmountSchema.optional(), perJudgment: moneyAmountSchema.optional() })
  .refine((b) => b.fixed !== undefined || b.perJudgment !== undefined, 'needs "fixed" or "perJudgment"');
export type BonusSettings = z.infer<typeof bonusSchema>;

/**
 * How `mturk publish` lists the batch on MTurk (issue 41). Reward is the batch's `pay` (US dollars); each of the `hits`
 * HITs takes `plannedRaters` assignments.
 */
export const mturkSchema = z.strictObject({
  /** Shown in MTurk's list of HITs; defaults to a neutral title, never the batch's name (workers read it). */
  title: z.string().trim().min(1).max(128).optional(),
  /** Shown with the title; defaults to the instructions' first 2,000 characters, else the question. */
  description: z.string().trim().min(1).max(2000).optional(),
  keywords: z.array(z.string().trim().min(1).max(40)).max(20).default(['research', 'rating', 'conversation']),
  /** Time a worker has to submit once they accept (MTurk's AssignmentDurationInSeconds). */
  durationMinutes: z.number().int().min(1).max(24 * 60).default(60),
  /** Hours after which MTurk approves a submitted assignment nobody acted on (at most 30 days). */
  autoApprovalDelayHours: z.number().int().min(1).max(720).default(72),
  /** How long the HITs are listed (MTurk's LifetimeInSeconds, at most a year). */
  lifetimeDays: z.number().min(0.01).max(365).default(7),
  /** Pixels of the ExternalQuestion's frame; 0 lets the page take the window's height. */
  frameHeight: z.number().int().min(0).max(5000).default(0),
  /** HITs of the same type: a multi-HIT study (provider.comparisonsPerHit) needs one per HIT a worker may take. */
  hits: z.number().int().min(1).max(100).default(1),
  /** MTurk's system qualifications: approval rate (percent), approved HITs, and worker locales (country codes). */
  minApprovalRate: z.number().int().min(0).max(100).nullable().default(95),
  minApprovedHits: z.number().int().min(0).max(1_000_000).nullable().default(null),
  locales: z.array(z.string().trim().regex(/^[A-Z]{2}$/, 'must be a two-letter country code, e.g. "US"')).max(30).default([]),
});
export type MturkSettings = z.infer<typeof mturkSchema>;

export const PROVIDER_KINDS = ['prolific', 'mturk', 'link'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export const providerSchema = z.strictObject({
  kind: z.enum(PROVIDER_KINDS).default('link'),
  /** Query parameter names the provider uses (Prolific lets a study rename them). */
  params: z
    .strictObject({
      participant: z.string().trim().min(1).max(64).optional(),
      study: z.string().trim().min(1).max(64).optional(),
      session: z.string().trim().min(1).max(64).optional(),
    })
    .default({}),
  completionCodes: z
    .strictObject({
      completed: codeSchema.optional(),
      screenedOut: codeSchema.optional(),
      noConsent: codeSchema.optional(),
      /** For a rater whose batch was closed or paused while they were working (falls back to `completed`). */
      partial: codeSchema.optional(),
    })
    .default({}),
  /**
   * Prolific: the fixed payment of the screen-out completion code (a paid screen-out, which only some Prolific
   * workspaces offer). Unset: a screened-out participant is asked to return the study. Never a rejection (issue 41).
   */
  screenOutPay: moneyAmountSchema.optional(),
  /** MTurk: use the sandbox's submit host when turkSubmitTo is absent. */
  sandbox: z.boolean().default(false),
  /**
   * MTurk multi-HIT studies: regular comparisons per HIT assignment. A worker submits each HIT after this many and may
   * accept another to go on, up to the per-rater cap. Unset: one HIT covers the worker's whole session.
   */
  comparisonsPerHit: z.number().int().min(1).max(1000).optional(),
});
export type ProviderSettings = z.infer<typeof providerSchema>;

export const CONTEXTS = ['scenario+profiles+goals', 'scenario+profiles', 'scenario'] as const;

export const onboardingSchema = z.strictObject({
  /** Number of known-answer pairs (a coherent dialogue against a shuffled or repeated-turn variant). */
  pairs: z.number().int().min(1).max(20).default(4),
  /** Share of onboarding pairs a rater must answer correctly to go on. */
  threshold: z.number().min(0).max(1).default(0.75),
});

/**
 * Thresholds of the quality signals (issue 43; docs/researcher/quality-signals.md), each stated and changeable in the
 * batch file as `quality: {...}`. None of them rejects anyone: they decide which signals are shown as flags.
 */
export const qualitySettingsSchema = z.strictObject({
  /** The reading floor: what was shown, in words, read at this many words a minute (a fast skim; 200-300 is usual reading). */
  readingWordsPerMinute: z.number().min(50).max(2000).default(500),
  /** A reason counts as pasted when at least this share of its characters arrived by paste. */
  pastedShare: z.number().min(0.01).max(1).default(0.5),
  /** Reasons shorter than this (after normalising) are not compared with each other or with the page. */
  minReasonChars: z.number().int().min(1).max(500).default(25),
  /** Two normalised reasons are near-identical at this Jaccard similarity of their word 3-grams or above. */
  similarity: z.number().min(0.5).max(1).default(0.8),
  /** A rater is flagged for a per-judgment signal when at least this share of their judgments shows it. */
  raterShare: z.number().min(0.01).max(1).default(0.5),
  /** "one key": at least this many answers with the page's figures, all chosen with the same shortcut key (1, 2 or 0). */
  oneKeyMinAnswers: z.number().int().min(2).max(1000).default(5),
});
export type QualitySettings = z.infer<typeof qualitySettingsSchema>;
export const DEFAULT_QUALITY: QualitySettings = qualitySettingsSchema.parse({});

export const attentionChecksSchema = z.strictObject({
  /** Share of served comparisons that are gold pairs. */
  rate: z.number().min(0).max(0.5).default(0.1),
  /** A rater who fails this many checks is screened out. */
  maxFailures: z.number().int().min(1).max(20).default(2),
});

/** A whole number from `min` to `max`, refused in words a person reads beside the field. */
const wholeNumber = (min: number, max: number) =>
  z.number({ message: `must be a whole number from ${min} to ${max}` }).int(`must be a whole number from ${min} to ${max}`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/**
 * How much of a batch one client address may take (issue 10): a script cannot hold every place. Colleagues behind one
 * office network share an address: raise the limits for such a pilot (issue 49; checked before consent).
 */
export const addressLimitsSchema = z.strictObject({
  /** Raters that may be created from one address within `windowMinutes`. */
  ratersPerWindow: wholeNumber(1, 10_000).default(20),
  windowMinutes: wholeNumber(1, 24 * 60).default(60),
  /** Raters of one address that may hold comparisons (a lease or reserved pairs, or a consent page open) at the same time. */
  activeRaters: wholeNumber(1, 10_000).default(5),
});

/**
 * The kinds of question (issue 53): `preference` asks which of the two is better by the question's text (naturalness,
 * goals, ...); `which-is-real` tells the rater that one of the two happened (the `real` condition's dialogue, e.g.
 * HUMANS:human) and asks which, with no tie, and optionally how sure they are (1-5). The page is the same blinded
 * comparison for both: nothing but the text tells the sides apart.
 */
export const QUESTION_KINDS = ['preference', 'which-is-real'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];
const ANSWER_MODES = ['off', 'optional', 'required'] as const;

/** One question raters answer on each pair (issue 16): its own choice, tie rule and reason, stored per judgment row. */
export const questionSchema = z
  .strictObject({
    id: z
      .string()
      .trim()
      .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be a short id of lower-case letters, digits, - or _ (e.g. "natural")'),
    text: z.string().trim().min(5).max(500),
    /** Absent for a preference question, so the settings of batches without realism stay as they were written. */
    kind: z.enum(QUESTION_KINDS, { message: `must be ${QUESTION_KINDS.join(' or ')}` }).optional(),
    /** which-is-real: the condition whose dialogues are real (every comparison of the batch sets it against another). */
    real: conditionSchema.optional(),
    allowTie: z.boolean().default(false),
    reason: z.enum(ANSWER_MODES).default('optional'),
    /** which-is-real: how sure the rater is, 1 (a guess) to 5 (certain); default optional. */
    confidence: z.enum(ANSWER_MODES).optional(),
  })
  .superRefine((q, ctx) => {
    if (q.kind === 'which-is-real') {
      if (!q.real) ctx.addIssue({ code: 'custom', path: ['real'], message: 'a which-is-real question names the condition that is real, e.g. "real": "HUMANS:human"' });
      if (q.allowTie) ctx.addIssue({ code: 'custom', path: ['allowTie'], message: 'a which-is-real question has no tie: one of the two conversations is real' });
      return;
    }
    if (q.real !== undefined) ctx.addIssue({ code: 'custom', path: ['real'], message: 'only a which-is-real question ("kind": "which-is-real") names a real condition' });
    if (q.confidence !== undefined && q.confidence !== 'off') ctx.addIssue({ code: 'custom', path: ['confidence'], message: 'only a which-is-real question ("kind": "which-is-real") asks for confidence' });
  })
  .transform((q) => (q.kind === 'which-is-real' ? { ...q, confidence: q.confidence ?? ('optional' as const) } : q));
export type Question = z.infer<typeof questionSchema>;

/**
 * Futility stopping (issue 44): beta spent by the family of the alpha spending, at the drift of a pair-majority win
 * rate of `effect` over the comparison's pairs; `binding` lowers the efficacy bounds (the futility stop must then be
 * obeyed), non-binding leaves them as without futility (docs/researcher/sequential-batches.md).
 */
export const futilitySchema = z.strictObject({
  beta: z.number({ message: 'must be a number such as 0.2' }).gt(0, 'must be above 0 (0.2 is usual)').lt(0.5, 'must be below 0.5 (0.2 is usual)'),
  effect: z
    .number({ message: 'must be a win rate such as 0.65' })
    .gt(0.5, 'must be the win rate of pair majorities under the alternative, above 0.5 (e.g. 0.65)')
    .lt(1, 'must be below 1 (e.g. 0.65)'),
  binding: z.boolean().default(false),
});

/**
 * The most looks a comparison may have: each look's bound is computed over every look before it, inside the answer's
 * write transaction (scripts/bench/sequential-looks.ts).
 */
export const MAX_LOOKS = 20;

/**
 * A group-sequential stopping rule applied to each comparison of the batch (issue 44; docs/researcher/sequential-batches.md):
 * looks at completed pairs (a pair counts once it has its K judgments; its outcome is its majority), each tested by the
 * exact binomial test of pair majorities at the nominal level of a Lan-DeMets alpha-spending bound. `alpha` is the
 * batch's family-wise level, split equally over its comparisons (Bonferroni).
 */
export const stoppingSchema = z
  .strictObject({
    /** Looks planned over the comparison's pairs: at 1/N, 2/N, ... of them (the last when every pair is complete). */
    looks: z.number().int().min(2).max(MAX_LOOKS).optional(),
    /** Or a look every M completed pairs of the comparison (and one when every pair is complete). */
    lookEvery: z.number().int().min(1).max(1_000_000).optional(),
    alpha: z.number().gt(0).max(0.2).default(0.05),
    spending: z.enum(SPENDING_FAMILIES, { message: `must be ${SPENDING_FAMILIES.join(' or ')} (futility spends beta by the same family)` }).default('obrien-fleming'),
    futility: futilitySchema.nullable().default(null),
    /**
     * When a comparison stops, give the judgments its pairs no longer need to the comparisons still open, as new pairs
     * from their unused scenario samples (docs/researcher/sequential-batches.md, "Reallocation").
     */
    reallocate: z.boolean({ message: 'reallocate must be true or false' }).optional(),
  })
  .refine((s) => (s.looks === undefined) !== (s.lookEvery === undefined), 'give either looks (a number of looks) or lookEvery (pairs between looks), not both');
export type StoppingRule = z.infer<typeof stoppingSchema>;

/** The id the single `question` setting stands for. */
export const DEFAULT_QUESTION_ID = 'natural';

const batchSettingsObject = z.strictObject({
  name: z.string().trim().min(1, 'is required').max(200),
  runs: z.array(z.string().trim().min(1)).min(1, 'needs at least one run (id or name)'),
  comparisons: z.array(comparisonSchema).min(1, 'needs at least one comparison'),
  /** "all", a category, or a list of scenario ids. */
  scenarios: z.union([z.string().trim().min(1), z.array(z.string().trim().min(1)).min(1)]).default('all'),
  judgmentsPerPair: z.number().int().min(1).max(50).default(3),
  question: z.string().trim().min(5).max(500).default(DEFAULT_QUESTION),
  /**
   * Several questions on each pair, all on one page with one submit. When given, the first one also fills `question`,
   * `allowTie` and `reason` (which then describe the first question), so single-question readers see the first.
   */
  questions: z
    .array(questionSchema)
    .min(1, 'needs at least one question')
    .max(6, 'at most 6 questions fit on one comparison page')
    .refine((qs) => new Set(qs.map((q) => q.id)).size === qs.length, 'question ids must be distinct')
    .nullable()
    .default(null),
  context: z.enum(CONTEXTS).default('scenario+profiles+goals'),
  allowTie: z.boolean().default(false),
  reason: z.enum(['off', 'optional', 'required']).default('optional'),
  /** Allow one rater two pairs of the same scenario sample (e.g. from two comparisons). */
  allowSameSample: z.boolean().default(false),
  onboarding: onboardingSchema.nullable().default(null),
  attentionChecks: attentionChecksSchema.nullable().default(null),
  quality: qualitySettingsSchema.default(DEFAULT_QUALITY),
  perRaterCap: z.number().int().min(1).max(1000).default(10),
  /** Places to be published (Prolific places, MTurk assignments): the capacity check refuses a batch they cannot fill. */
  plannedRaters: z.number().int().min(1).max(1_000_000).nullable().default(null),
  leaseMinutes: z.number().int().min(1).max(24 * 60).default(20),
  addressLimits: addressLimitsSchema.default({ ratersPerWindow: 20, windowMinutes: 60, activeRaters: 5 }),
  provider: providerSchema.default({ kind: 'link', params: {}, completionCodes: {}, sandbox: false }),
  estimatedMinutes: z.number().min(1).max(600).default(10),
  pay: z.string().trim().max(50).default(''),
  /** Paid to each approved participant by `prolific settle` / `mturk settle` (issue 41); null: no bonus. */
  bonus: bonusSchema.nullable().default(null),
  /** How `mturk publish` lists the batch on MTurk; null: MTurk's defaults as described in mturkSchema. */
  mturk: mturkSchema.nullable().default(null),
  consent: z.string().max(20_000).default(''),
  instructions: z.string().max(20_000).default(''),
  /**
   * Ids of earlier batches whose participants may not take this one (a new round wants fresh raters). Matched on the
   * provider's participant id (Prolific PROLIFIC_PID, MTurk workerId); plain-link raters have no stable identity.
   */
  /**
   * Issue 53: the margin of the equivalence test of a which-is-real question, stated before the batch opens (frozen
   * from then on): a synthetic condition is called indistinguishable from the real one only when its detection
   * accuracy is shown to lie within 0.5 ± this (two one-sided tests). Null: no equivalence claim can be made.
   */
  equivalenceMargin: z
    .number({ message: 'must be a share such as 0.05' })
    .gt(0, 'must be above 0 (0.05 is usual)')
    .max(0.25, 'must be at most 0.25: a wider margin calls raters who are right three times in four "unable to tell"')
    .nullable()
    .default(null),
  /** Stop a comparison once its answer is known (issue 44); null: every pair gets its K judgments. */
  stopping: stoppingSchema.nullable().default(null),
  blockParticipantsOf: z
    .array(z.number().int().positive())
    .max(200)
    .default([])
    .transform((ids) => [...new Set(ids)].sort((a, b) => a - b)),
});

export const batchSettingsSchema = batchSettingsObject
  .refine((s) => !s.stopping?.reallocate || s.comparisons.length >= 2, {
    message: 'needs at least two comparisons: a stopped comparison gives its unused judgments to the others',
    path: ['stopping', 'reallocate'],
  })
  .superRefine(checkRealismQuestions)
  .transform((settings) => {
    const first = settings.questions?.[0];
    return first ? { ...settings, question: first.text, allowTie: first.allowTie, reason: first.reason } : settings;
  });
export type BatchSettings = z.infer<typeof batchSettingsSchema>;

/**
 * A which-is-real question (issue 53) is asked of every pair, so every comparison sets its real condition against
 * another; one per batch (the analysis's realism section and the exports' real_side are of it); a margin only with it.
 */
function checkRealismQuestions(settings: z.infer<typeof batchSettingsObject>, ctx: z.RefinementCtx): void {
  const realism = (settings.questions ?? []).map((q, index) => ({ q, index })).filter(({ q }) => q.kind === 'which-is-real');
  if (realism.length > 1) ctx.addIssue({ code: 'custom', path: ['questions', realism[1]?.index ?? 0], message: 'a batch has at most one which-is-real question' });
  const first = realism[0];
  if (!first) {
    if (settings.equivalenceMargin !== null)
      ctx.addIssue({ code: 'custom', path: ['equivalenceMargin'], message: 'is the margin of a which-is-real question\'s equivalence test: the batch has no such question' });
    return;
  }
  const real = first.q.real;
  settings.comparisons.forEach((comparison, index) => {
    if (real && !comparison.includes(real))
      ctx.addIssue({ code: 'custom', path: ['comparisons', index], message: `must set ${real} (the which-is-real question's real condition) against another condition, not ${comparison.join(' against ')}` });
  });
}
export type BatchSettingsInput = z.input<typeof batchSettingsSchema>;

export const BATCH_STATES = ['draft', 'open', 'paused', 'closed'] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** The questions of a batch in page order: `questions`, or the single `question` as one question with id "natural". */
export function batchQuestions(settings: BatchSettings): Question[] {
  return (
    settings.questions ?? [{ id: DEFAULT_QUESTION_ID, text: settings.question, allowTie: settings.allowTie, reason: settings.reason }]
  );
}

/**
 * The question with this id among a batch's questions, or why there is none (naming the batch's questions): the analysis
 * and the exports each refuse an unknown id with their own error, in the same words.
 */
export function findQuestion<Q extends { id: string }>(batchId: number, questions: readonly Q[], id: string): { question: Q } | { problem: string } {
  const question = questions.find((q) => q.id === id);
  return question ? { question } : { problem: `batch ${batchId} has no question "${id}"; its questions are: ${questions.map((q) => q.id).join(', ')}` };
}
