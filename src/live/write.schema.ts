import { z } from 'zod';
import { TURN_TEXT_MAX } from './live.schema.js';

// What a writer's page sends (src/live/write.routes.ts), read with zod at the edge: the whole draft each time, as a
// JSON field of a small form (the page saves as the writer types and once more when they hand it in).

/** The actions a writer gives a turn: Sotopia's, without "none" (a written turn always does something). */
export const WRITTEN_ACTIONS = ['speak', 'non-verbal', 'action', 'leave'] as const;

/** A turn as the page keeps it, with what the page measured while its text was typed (as a live turn's signals). */
const draftTurnSchema = z.strictObject({
  speaker: z.union([z.literal(1), z.literal(2)], { message: 'each turn belongs to one of the two characters' }),
  action: z.enum(WRITTEN_ACTIONS, { message: 'each turn says something, shows a gesture or expression, does an action, or leaves' }),
  text: z.string().max(TURN_TEXT_MAX, `a turn may be at most ${TURN_TEXT_MAX} characters`),
  keys: z.number().int().min(0).max(1_000_000).default(0),
  typing_ms: z.number().int().min(0).max(86_400_000).default(0),
  pastes: z.number().int().min(0).max(100_000).default(0),
});
export type DraftTurnInput = z.infer<typeof draftTurnSchema>;

/** The most turns a draft may hold whatever the batch says (the batch's own maximum is checked by the draft's owner). */
export const DRAFT_TURNS_MAX = 100;

const draftSchema = z.strictObject({
  version: z.number().int().min(1).max(1_000_000_000),
  // The page's own name (random, made when it loads) and the stored version it last knew: a save from another page than
  // the one that saved last is taken only when it started from what is stored (src/live/write-session.ts). A page
  // loaded before these existed sends neither and is ordered by its counter alone.
  tab: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'the page sent a name that cannot be read: reload the page').optional(),
  base: z.number().int().min(0).max(1_000_000_000).optional(),
  turns: z.array(draftTurnSchema).max(DRAFT_TURNS_MAX, `a conversation may have at most ${DRAFT_TURNS_MAX} turns`),
});
export type DraftInput = z.infer<typeof draftSchema>;

/** The form: `draft`, the page's JSON of the whole draft. */
export const draftFormSchema = z
  .object({ draft: z.string().min(2).max(200_000, 'the conversation is too long to save') })
  .transform((form, ctx) => {
    let json: unknown;
    try {
      json = JSON.parse(form.draft);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'the page sent a draft that cannot be read: reload the page (your saved turns come back)' });
      return z.NEVER;
    }
    const parsed = draftSchema.safeParse(json);
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]?.message ?? 'the draft cannot be read' });
      return z.NEVER;
    }
    return parsed.data;
  });
