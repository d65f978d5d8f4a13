import { z } from 'zod';
import { PREFERENCE_PROMPTS } from './rater-prompt.js';

// One schema for export options, shared by `simarena export`, the API's `?format=...` and the console's button.

export const EXPORT_FORMATS = [
  'judgments-csv',
  'judgments-jsonl',
  'arena',
  'acute',
  'preferences',
  'dialogues',
  'sotopia',
  'hf',
  'bundle',
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Formats that hold the answers to one question (their records are votes on a pair); the others hold every question. */
export const ONE_QUESTION_FORMATS: readonly ExportFormat[] = ['arena', 'acute', 'preferences', 'hf'];

/** Formats written as one archive even on disk. */
export const ARCHIVE_FORMATS: readonly ExportFormat[] = ['bundle'];

export const exportOptionsSchema = z.strictObject({
  /** The batch: its numeric id or its public id. */
  batch: z.union([z.number().int().positive(), z.string().trim().min(1).max(200)]).transform(String),
  format: z.enum(EXPORT_FORMATS, { error: `format must be one of ${EXPORT_FORMATS.join(', ')}` }),
  /** Keep excluded raters' judgments and removed pairs, with an `exclusion_reason` column. */
  includeExcluded: z.boolean().default(false),
  /** Keep onboarding and attention-check answers, flagged by `is_gold`. */
  includeGold: z.boolean().default(false),
  /** Raw provider ids (participant, study, session): the CLI's operator or an admin only; the caller decides. */
  withProviderIds: z.boolean().default(false),
  /** Dialogues: the full record of model calls of every dialogue. */
  withCalls: z.boolean().default(false),
  /** Preferences: only pairs where the chosen dialogue has more than half of all judgments (ties count). */
  majorityOnly: z.boolean().default(false),
  /** Preferences: the least difference between the chosen and the rejected dialogue's votes. */
  minMargin: z.number().int().min(1).max(1000).default(1),
  /** Preferences: `rater` (default) writes what raters saw as the prompt, `script` the SCRIPT generation prompt. */
  prompt: z.enum(PREFERENCE_PROMPTS, { error: 'must be rater (what raters saw) or script (the SCRIPT generation prompt)' }).default('rater'),
  /**
   * Issue 16, a question id of the batch: the formats of one question (arena, acute, preferences, hf) default to the
   * first question; the judgment formats and the bundle default to every question, each row naming its question_id.
   */
  question: z.string().trim().min(1).max(32).optional(),
});
export type ExportOptions = z.infer<typeof exportOptionsSchema>;
export type ExportOptionsInput = z.input<typeof exportOptionsSchema>;
