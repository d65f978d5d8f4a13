// Quality signals per rater (issue 43; docs/researcher/quality-signals.md): what the page measured per judgment,
// checked by the server (src/rating/answer-signals.ts), and what only shows across raters (the same reason from two
// raters, a reason copied from the page). Each signal is a fact about how an answer was given, not a verdict: none
// rejects anyone, and the reading-time signal never feeds a rejection.
import type { QualitySettings } from '../batches/batch.schema.js';
import { readingFloorMs } from '../numbers/reading-time.js';

/** One first-question judgment of a regular pair with what the server and the page measured. */
export type SignalJudgment = {
  rater_id: number;
  /** Time counted for the judgment (the page's active time, bounded by the server's own shown and submitted times). */
  active_ms: number;
  /** Words of both conversations shown. */
  words: number | null;
  reason: string | null;
  telemetry: 'plausible' | 'implausible' | null;
  reason_chars: number | null;
  pasted_chars: number | null;
  keystrokes: number | null;
  typing_ms: number | null;
  answered_before_second: number | null;
  /** How the first question's choice was made (migration 040): '1', '2', '0', 'pointer', 'other'; null when not sent. */
  answer_key: string | null;
};

export type RaterSignals = {
  judgments: number;
  /** Judgments with the page's figures (a page with its script). */
  measured: number;
  implausible: number;
  pasted: number;
  typed: number;
  underReadingFloor: number;
  beforeSecond: number;
  sameAsOtherRater: number;
  copiedFromPage: number;
  /** Plausible answers whose choice the page saw made, by how it was made ('1', '2', '0', 'pointer', 'other'). */
  keys: Record<string, number>;
};

export type SignalFlag = 'pasted reasons' | 'implausible telemetry' | 'under reading time' | 'answered before conversation 2' | 'same reason as another rater' | 'reason copied from the page' | 'one key';

/** The words of a text, lower case, letters and digits only: what "the same reason" compares. */
export function normaliseReason(text: string): string {
  return text.toLowerCase().normalize('NFKC').replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}

function shingles(normalised: string): Set<string> {
  const words = normalised.split(' ');
  const out = new Set<string>();
  if (words.length < 3) out.add(normalised);
  for (let i = 0; i + 3 <= words.length; i += 1) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

/**
 * For each reason (rater, text), whether a different rater of the batch gave a near-identical one: Jaccard similarity
 * of word 3-grams at or above `similarity`, reasons under `minChars` normalised characters left out. Candidates are
 * found through shared 3-grams, so only reasons with something in common are compared.
 */
export function sharedReasons(reasons: { rater: number; text: string }[], q: Pick<QualitySettings, 'minReasonChars' | 'similarity'>): boolean[] {
  const norm = reasons.map((r) => normaliseReason(r.text));
  const sets = norm.map((n) => (n.length >= q.minReasonChars ? shingles(n) : null));
  const index = new Map<string, number[]>();
  sets.forEach((set, i) => set?.forEach((s) => index.set(s, [...(index.get(s) ?? []), i])));
  return sets.map((set, i) => {
    if (!set) return false;
    const common = new Map<number, number>();
    for (const s of set) for (const j of index.get(s) ?? []) if (reasons[j]?.rater !== reasons[i]?.rater) common.set(j, (common.get(j) ?? 0) + 1);
    for (const [j, shared] of common) {
      const other = sets[j] as Set<string>;
      if (shared / (set.size + other.size - shared) >= q.similarity) return true;
    }
    return false;
  });
}

/**
 * Per rater, how many of their judgments show each signal. `shared` and `copied` say, per judgment, whether its reason
 * matched another rater's or text on the page (computed by the caller over the whole batch).
 */
export function raterSignals(rows: SignalJudgment[], shared: boolean[], copied: boolean[], q: QualitySettings): Map<number, RaterSignals> {
  const out = new Map<number, RaterSignals>();
  rows.forEach((j, k) => {
    let s = out.get(j.rater_id);
    if (!s) out.set(j.rater_id, (s = { judgments: 0, measured: 0, implausible: 0, pasted: 0, typed: 0, underReadingFloor: 0, beforeSecond: 0, sameAsOtherRater: 0, copiedFromPage: 0, keys: {} }));
    s.judgments += 1;
    const floor = readingFloorMs(j.words, q.readingWordsPerMinute);
    if (floor !== null && j.active_ms < floor) s.underReadingFloor += 1;
    if (shared[k]) s.sameAsOtherRater += 1;
    if (copied[k]) s.copiedFromPage += 1;
    if (j.telemetry === null) return;
    s.measured += 1;
    if (j.telemetry === 'implausible') s.implausible += 1;
    const chars = j.reason_chars ?? 0;
    if (chars > 0 && Math.min(1, (j.pasted_chars ?? 0) / chars) >= q.pastedShare) s.pasted += 1;
    else if (chars > 0 && (j.keystrokes ?? 0) > 0) s.typed += 1;
    if (j.answered_before_second === 1) s.beforeSecond += 1;
    if (j.telemetry === 'plausible' && j.answer_key !== null) s.keys[j.answer_key] = (s.keys[j.answer_key] ?? 0) + 1;
  });
  return out;
}

/**
 * "one key": every answer whose choice the page saw made (at least `min` of them) was given with the same shortcut key.
 * A pointer or tap is not a key: a rater who always clicks the same side is "one side" (src/analysis/rater-quality.ts).
 */
export function oneKey(keys: Record<string, number>, min: number): boolean {
  const used = Object.entries(keys).filter(([, n]) => n > 0);
  const [only] = used;
  return used.length === 1 && only !== undefined && ['1', '2', '0'].includes(only[0]) && only[1] >= min;
}

/** The flags of a rater's signals: a signal shown by at least `raterShare` of the judgments it can be seen on. */
export function signalFlags(s: RaterSignals | undefined, q: QualitySettings): SignalFlag[] {
  if (!s || s.judgments === 0) return [];
  const share = (n: number, of: number) => of > 0 && n / of >= q.raterShare;
  const flags: SignalFlag[] = [];
  if (share(s.pasted, s.measured)) flags.push('pasted reasons');
  if (s.implausible > 0) flags.push('implausible telemetry');
  if (share(s.underReadingFloor, s.judgments)) flags.push('under reading time');
  if (share(s.beforeSecond, s.measured)) flags.push('answered before conversation 2');
  if (s.sameAsOtherRater > 0) flags.push('same reason as another rater');
  if (s.copiedFromPage > 0) flags.push('reason copied from the page');
  if (oneKey(s.keys, q.oneKeyMinAnswers)) flags.push('one key');
  return flags;
}

/** Whether a normalised reason of at least `minChars` characters appears word for word in the page's text. */
export function copiedFromPage(reason: string | null, pageText: string, minChars: number): boolean {
  if (!reason) return false;
  const n = normaliseReason(reason);
  return n.length >= minChars && ` ${normaliseReason(pageText)} `.includes(` ${n} `);
}
