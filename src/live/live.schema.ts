import { z } from 'zod';

// What a player's page sends (src/live/live.routes.ts), read with zod at the edge.

/** The longest turn a player may send: a chat turn, not an essay (Sotopia's turns are a few sentences). */
export const TURN_TEXT_MAX = 1000;

const signalsSchema = z
  .string()
  .max(300)
  .optional()
  .transform((text, ctx) => {
    if (!text) return null;
    try {
      const parsed = z
        .strictObject({ keys: z.number().int().min(0).max(1_000_000), typing_ms: z.number().int().min(0).max(86_400_000), pastes: z.number().int().min(0).max(100_000) })
        .safeParse(JSON.parse(text));
      return parsed.success ? { keystrokes: parsed.data.keys, typingMs: parsed.data.typing_ms, pasteAttempts: parsed.data.pastes } : null;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'the page sent figures that cannot be read' });
      return z.NEVER;
    }
  });

export const turnFormSchema = z
  .object({
    key: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'the message has no valid key: reload the page and send it again'),
    action: z.enum(['speak', 'non-verbal', 'action', 'leave'], { message: 'choose what you do: say something, a gesture or expression, an action, or leave' }),
    text: z.string().max(TURN_TEXT_MAX, `a turn may be at most ${TURN_TEXT_MAX} characters`).default(''),
    signals: signalsSchema,
  })
  .refine((t) => t.action === 'leave' || t.text.trim().length > 0, { message: 'write something before you send it', path: ['text'] })
  .transform((t) => ({ ...t, text: t.text.trim().replace(/\s+/g, ' ') }));

export const reportFormSchema = z.object({ reason: z.string().trim().max(1000, 'keep the reason under 1,000 characters').optional().default('') });

export const answersFormSchema = z.object({
  guess: z.enum(['person', 'ai'], { message: 'choose whether your partner was a person or an AI' }),
  goal: z.coerce.number({ message: 'choose how far you got with your goal, from 1 to 10' }).int().min(1, 'choose a number from 1 to 10').max(10, 'choose a number from 1 to 10'),
});

export const consentFormSchema = z.object({ decision: z.enum(['agree', 'decline'], { message: 'choose one of the buttons' }) });

/** The turn index a reconnecting page resumes after: its Last-Event-ID, else the `after` of its first request. */
export function resumeAfter(lastEventId: string | undefined, after: unknown): number {
  const text = lastEventId ?? (typeof after === 'string' ? after : '');
  return /^-?\d{1,6}$/.test(text) ? Math.max(-1, Number(text)) : -1;
}
