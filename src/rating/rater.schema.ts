import { z } from 'zod';

// Rater forms, validated at the edge. Field names are the public contract of the no-JavaScript flow:
// `choice` ∈ left/right/tie, `reason`, `active_ms`, plus `rt` (signed rater token) and `_csrf`.

const emptyToUndefined = (v: unknown) => (v === '' || v === null ? undefined : v);

export const REASON_MAX = 2000;

export const judgmentFormSchema = z.object({
  choice: z.enum(['left', 'right', 'tie'], { error: 'Please choose one of the conversations.' }),
  reason: z.string().max(REASON_MAX, `Please keep the reason under ${REASON_MAX} characters.`).optional().default(''),
  active_ms: z.preprocess(emptyToUndefined, z.coerce.number().int().min(0).max(86_400_000).optional()),
});

export const consentFormSchema = z.object({ decision: z.enum(['agree', 'decline'], { error: 'Please choose whether you agree.' }) });

export const reportFormSchema = z.object({
  which: z.enum(['left', 'right', 'both'], { error: 'Please say which conversation you are reporting.' }),
  reason: z.string().trim().min(3, 'Please describe the problem in a few words.').max(1000, 'Please keep the description under 1000 characters.'),
});
