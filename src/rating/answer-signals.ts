// What the rater's page says it measured while a comparison was open (public/js/rater.js, the hidden `signals`
// field), read with zod and checked against what the server knows for itself: how long the comparison was open (its
// own shown and submitted times) and how long the stored reasons are (issue 43). The page's figures are never taken on
// trust: figures that cannot be true are kept but marked implausible, with the reason in words.
import { z } from 'zod';

/** The hidden field's largest accepted length: a few numbers in JSON. */
export const SIGNALS_FIELD_MAX = 400;

const count = z.number().int().min(0).max(10_000_000);
const telemetrySchema = z.strictObject({
  v: z.literal(1),
  pastes: count,
  pasted: count,
  keys: count,
  typing_ms: count,
  hidden_ms: count,
  before_second: z.boolean().nullable(),
  // Issue 51: characters already in the reason boxes when the page started (restored after a reload, or sent back
  // after a refused answer) and characters the browser inserted with no key pressed and nothing pasted (dictation, a
  // phone's suggestions, an input method). Optional: a page loaded before they existed sends neither.
  restored: count.optional(),
  inserted: count.optional(),
  // Read as any short text and checked against ANSWER_KEYS below, so that a forged value is named, not just unreadable.
  key: z.string().max(20).nullable().optional(),
});

/** How the first question's choice was made, as the page can tell it: a shortcut key, a pointer or tap, or otherwise. */
export const ANSWER_KEYS = ['1', '2', '0', 'pointer', 'other'] as const;
export type AnswerKey = (typeof ANSWER_KEYS)[number];
const isAnswerKey = (k: string | null | undefined): k is AnswerKey => (ANSWER_KEYS as readonly (string | null | undefined)[]).includes(k);

export type AnswerSignals = {
  telemetry: 'plausible' | 'implausible';
  problem: string | null;
  reasonChars: number;
  pasteEvents: number;
  pastedChars: number;
  keystrokes: number;
  typingMs: number;
  hiddenMs: number;
  answeredBeforeSecond: boolean | null;
  /** Null when the page sent none, or a value outside ANSWER_KEYS (never trusted). */
  answerKey: AnswerKey | null;
  /** Characters on the page before it started, and characters inserted without a key or a paste; null when not sent. */
  restoredChars: number | null;
  insertedChars: number | null;
};

/**
 * The plausibility rules, stated once (docs/researcher/quality-signals.md). Typed characters may exceed keys pressed a
 * little: a phone's word suggestion or autocorrection inserts several characters for one touch. Characters the page
 * found already there (restored) or saw inserted without a key (dictated) are not typed, so they are not held to keys.
 */
export const TELEMETRY_RULES = {
  /** Slack on "no longer than the comparison was open", for clocks and the time the request took. */
  clockSlackMs: 2000,
  /** Characters that arrived without a paste may be at most this many per key pressed, */
  charsPerKey: 4,
  /** plus this many. */
  charsSlack: 10,
  /** More keys per second than this over the whole time open is not a person typing. */
  maxKeysPerSecond: 20,
} as const;

/** The first rule the page's figures break, in words, or null when they fit what the server measured. */
function implausibility(t: z.infer<typeof telemetrySchema>, reasonChars: number, openMs: number): string | null {
  const rules = TELEMETRY_RULES;
  if (t.key !== undefined && t.key !== null && !isAnswerKey(t.key)) return 'an answer key the page never sends';
  if (t.typing_ms > openMs + rules.clockSlackMs) return 'typing time longer than the comparison was open';
  if (t.hidden_ms > openMs + rules.clockSlackMs) return 'hidden time longer than the comparison was open';
  if (t.pasted > 0 && t.pastes === 0) return 'pasted characters without a paste';
  const typed = Math.max(0, reasonChars - Math.min(t.pasted, reasonChars) - (t.restored ?? 0) - (t.inserted ?? 0));
  if (typed > t.keys * rules.charsPerKey + rules.charsSlack) return 'more characters typed than keys pressed';
  if (t.keys > ((openMs + rules.clockSlackMs) / 1000) * rules.maxKeysPerSecond) return 'more keys than a person can press in the time open';
  return null;
}

/**
 * The signals of one answer: null when the page sent none (no JavaScript); implausible, with zero figures, when the
 * field cannot be read.
 */
export function checkAnswerSignals(field: string | null | undefined, reasonChars: number, openMs: number): AnswerSignals | null {
  if (field === null || field === undefined || field === '') return null;
  let raw: unknown;
  try {
    raw = JSON.parse(field);
  } catch {
    raw = null;
  }
  const parsed = telemetrySchema.safeParse(raw);
  if (!parsed.success) {
    return {
      telemetry: 'implausible',
      problem: 'the page sent figures that cannot be read',
      reasonChars,
      pasteEvents: 0,
      pastedChars: 0,
      keystrokes: 0,
      typingMs: 0,
      hiddenMs: 0,
      answeredBeforeSecond: null,
      answerKey: null,
      restoredChars: null,
      insertedChars: null,
    };
  }
  const t = parsed.data;
  const problem = implausibility(t, reasonChars, openMs);
  return {
    telemetry: problem ? 'implausible' : 'plausible',
    problem,
    reasonChars,
    pasteEvents: t.pastes,
    pastedChars: t.pasted,
    keystrokes: t.keys,
    typingMs: t.typing_ms,
    hiddenMs: t.hidden_ms,
    answeredBeforeSecond: t.before_second,
    answerKey: isAnswerKey(t.key) ? t.key : null,
    restoredChars: t.restored ?? null,
    insertedChars: t.inserted ?? null,
  };
}
