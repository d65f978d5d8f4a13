import { z } from 'zod';

// Rater forms, validated at the edge. Field names are the public contract of the no-JavaScript flow:
// `choice` ∈ left/right/tie, `reason`, `confidence` (1-5, a which-is-real question's, issue 53), `active_ms`, `signals`
// (set by the page's script), plus `rt` (signed rater token) and `_csrf`.
// A batch with several questions (issue 16) names the fields by the question's number on the page, never by its id
// (a researcher's word that the rater need not see): question 1 keeps `choice`/`reason`/`confidence`, so a one-question
// page and its clients are unchanged, and question n ≥ 2 answers in `choice_n`/`reason_n`/`confidence_n`.

const emptyToUndefined = (v: unknown) => (v === '' || v === null ? undefined : v);

export const REASON_MAX = 2000;
/** As many as batch.schema.ts allows on one page. */
export const QUESTIONS_MAX = 6;
/**
 * The largest answer form read: every reason box full of three-byte UTF-8 characters (CJK), each sent as nine bytes
 * (%XX%XX%XX), plus the other fields. At 16 KB, a reason of 2,000 such characters within the limit was refused as
 * "too long" before its length was ever checked, and an over-long one lost its text to a generic page (issue 49).
 */
export const ANSWER_FORM_BYTES = QUESTIONS_MAX * REASON_MAX * 9 + 16 * 1024;

/** How the rater's page writes a count: 2,000. */
function formatCount(n: number): string {
  return n.toLocaleString('en-GB');
}

/**
 * The refusal of a reason over the limit, said beside its box with the text kept (issue 49): its length, the limit and
 * how much to take out, so nothing is ever cut without the rater knowing.
 */
export function reasonTooLong(length: number): string {
  return `This reason is ${formatCount(length)} characters long; the limit is ${formatCount(REASON_MAX)}. Please shorten it by ${formatCount(length - REASON_MAX)} character${length - REASON_MAX === 1 ? '' : 's'}.`;
}

export const CHOICES = ['left', 'right', 'tie'] as const;
export type Choice = (typeof CHOICES)[number];
/** `confidence`: a which-is-real answer's 1-5 (issue 53), null when none was given or asked. */
export type Answer = { choice: Choice; reason: string; confidence: number | null };

/** The form field names of the question at `index` (0 = the first question on the page). */
export function answerFields(index: number): { choice: string; reason: string; confidence: string } {
  return index === 0
    ? { choice: 'choice', reason: 'reason', confidence: 'confidence' }
    : { choice: `choice_${index + 1}`, reason: `reason_${index + 1}`, confidence: `confidence_${index + 1}` };
}

const choiceField = z.preprocess(emptyToUndefined, z.enum(CHOICES).optional());
// Browsers send a box's line breaks as CR LF, but count them as one character against its limit: read as the page counts.
const reasonField = z
  .string()
  .transform((text) => text.replace(/\r\n?/g, '\n'))
  .superRefine((text, ctx) => {
    const length = text.trim().length;
    if (length > REASON_MAX) ctx.addIssue({ code: 'custom', message: reasonTooLong(length) });
  })
  .optional()
  .default('');
const confidenceField = z.preprocess(
  emptyToUndefined,
  z.coerce.number({ message: 'Please choose how sure you are, from 1 to 5.' }).int('Please choose how sure you are, from 1 to 5.').min(1, 'Please choose how sure you are, from 1 to 5.').max(5, 'Please choose how sure you are, from 1 to 5.').optional(),
);

const answerShape: Record<string, typeof choiceField | typeof reasonField | typeof confidenceField> = {};
for (let i = 0; i < QUESTIONS_MAX; i += 1) {
  const names = answerFields(i);
  answerShape[names.choice] = choiceField;
  answerShape[names.reason] = reasonField;
  answerShape[names.confidence] = confidenceField;
}

/** Every answer field a page may send, each optional here: which are required depends on the batch's questions. */
export const judgmentFormSchema = z.object({
  ...answerShape,
  active_ms: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(86_400_000).optional()),
  // What the page measured (public/js/rater.js, issue 43), checked by src/rating/answer-signals.ts: never a reason to
  // refuse an answer, so a field that is not text is dropped here.
  signals: z.string().optional().catch(undefined),
});

/**
 * The answers of a parsed judgment form to a batch's `count` questions in page order, or the first question left
 * unanswered (its number on the page, 1-based) with the message that names it.
 */
export function readAnswers(form: Record<string, unknown>, count: number): { answers: Answer[] } | { missing: number; message: string } {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i += 1) {
    const names = answerFields(i);
    const choice = form[names.choice];
    if (choice !== 'left' && choice !== 'right' && choice !== 'tie') {
      return { missing: i + 1, message: count === 1 ? 'Please choose one of the conversations.' : `Please answer question ${i + 1}.` };
    }
    const reason = form[names.reason];
    const confidence = form[names.confidence];
    answers.push({ choice, reason: typeof reason === 'string' ? reason : '', confidence: typeof confidence === 'number' ? confidence : null });
  }
  return { answers };
}

/** The on-page number of the question a form field answers (`reason_2` → 2, `choice` → 1, `confidence_3` → 3), or null for another field. */
export function questionOfField(name: unknown): number | null {
  const match = typeof name === 'string' ? /^(?:choice|reason|confidence)(?:_(\d))?$/.exec(name) : null;
  return match ? Number(match[1] ?? 1) : null;
}

/** The on-page number of the question whose reason box a form field is (`reason_2` → 2, `reason` → 1), or null. */
export function reasonOfField(name: unknown): number | null {
  return typeof name === 'string' && name.startsWith('reason') ? questionOfField(name) : null;
}

/** A field named as a choice that holds something other than left/right/tie (a tampered or stale form). */
export function hasUnknownChoice(body: Record<string, unknown>): boolean {
  for (let i = 0; i < QUESTIONS_MAX; i += 1) {
    const value = body[answerFields(i).choice];
    if (typeof value === 'string' && value !== '' && !(CHOICES as readonly string[]).includes(value)) return true;
  }
  return false;
}

/** What the rater sent, kept as text to fill the page again when an answer is refused. */
export function keptAnswers(body: Record<string, unknown>, count: number): { choices: string[]; reasons: string[]; confidences: string[] } {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const indexes = Array.from({ length: count }, (_, i) => answerFields(i));
  return { choices: indexes.map((n) => text(body[n.choice])), reasons: indexes.map((n) => text(body[n.reason])), confidences: indexes.map((n) => text(body[n.confidence])) };
}

export const consentFormSchema = z.object({ decision: z.enum(['agree', 'decline'], { error: 'Please choose whether you agree.' }) });

export const reportFormSchema = z.object({
  which: z.enum(['left', 'right', 'both'], { error: 'Please say which conversation you are reporting.' }),
  reason: z.string().trim().min(3, 'Please describe the problem in a few words.').max(1000, 'Please keep the description under 1000 characters.'),
});
