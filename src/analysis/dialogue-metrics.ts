import type { Fact } from '../scenarios/scenario.schema.js';
import { type DialogueLeakage, dialogueLeakage } from './information-leakage.js';
import { countWords } from '../generation/dialogue-words.js';

export type DialogueForMetrics = {
  mode: string;
  model: string;
  endReason: string | null;
  turns: { speaker: number; action: string; text: string }[];
  /** The scenario's category, to report per category. */
  category?: string;
  /** The scenario's marked private facts, for the leakage metrics. */
  facts?: Fact[];
};

/** Information leakage over a condition's dialogues whose scenario has marked facts (see information-leakage.ts). */
export type LeakageMetrics = {
  dialogues: number;
  /** Dialogues in which a character mentioned a fact the other side holds. */
  mentioned: number;
  /** Mean relative position (0 = start, 1 = end) of that first mention, over the dialogues with one. */
  first_mention_position: number | null;
  /** The same for the mutual friend only (the paper's 0.13 SCRIPT vs 0.39 AGENTS). */
  mutual_friend_position: number | null;
  /** Share of dialogues with a mention of the other side's fact before it could have been learnt. */
  premature_share: number | null;
  premature_mentions: number;
};

export type ConditionDialogueMetrics = {
  condition: string;
  mode: string;
  model: string;
  dialogues: number;
  turns_per_dialogue: number | null;
  /** Words per spoken turn (actions `speak`). */
  words_per_turn: number | null;
  /** Share of turns that are non-verbal (`non-verbal` or `action`). */
  non_verbal_share: number | null;
  /** The two parts of it: non-verbal communication (`non-verbal`) and physical actions (`action`). */
  non_verbal_communication_share: number | null;
  physical_action_share: number | null;
  /** Share of a speaker's word trigrams that already occurred in that speaker's earlier turns, averaged over dialogues. */
  repetition: number | null;
  /** Share of dialogues in which a character left, and the mean turn index (0-based) of the leaving turn. */
  left_share: number | null;
  left_at_turn: number | null;
  /** Who left: counts by speaker 1 or 2. */
  left_by: { speaker_1: number; speaker_2: number };
  /** Null when no dialogue of the condition has a scenario with marked facts. */
  leakage: LeakageMetrics | null;
};

/** The same metrics for the dialogues of one scenario category. */
export type CategoryDialogueMetrics = ConditionDialogueMetrics & { category: string };

/** Mean words per spoken turn of one dialogue, NaN when it has no spoken turn. */
export function wordsPerTurn(turns: { action: string; text: string }[]): number {
  let words = 0;
  let spoken = 0;
  for (const t of turns)
    if (t.action === 'speak') {
      words += countWords(t.text);
      spoken++;
    }
  return spoken > 0 ? words / spoken : NaN;
}

function repetition(turns: { speaker: number; action: string; text: string }[]): number | null {
  let total = 0;
  let repeated = 0;
  for (const speaker of [1, 2]) {
    const seen = new Set<string>();
    for (const t of turns) {
      if (t.speaker !== speaker || t.action !== 'speak') continue;
      const words = t.text.toLowerCase().replace(/[^\p{L}\p{N}\s']/gu, ' ').split(/\s+/).filter(Boolean);
      const grams: string[] = [];
      for (let i = 0; i + 3 <= words.length; i++) grams.push(words.slice(i, i + 3).join(' '));
      for (const g of grams) {
        total++;
        if (seen.has(g)) repeated++;
      }
      for (const g of grams) seen.add(g);
    }
  }
  return total > 0 ? repeated / total : null;
}

const mean = (xs: number[]) => {
  const ok = xs.filter((x) => Number.isFinite(x));
  return ok.length > 0 ? ok.reduce((s, x) => s + x, 0) / ok.length : null;
};

const shareOf = (d: DialogueForMetrics, action: string) =>
  d.turns.length > 0 ? d.turns.filter((t) => t.action === action).length / d.turns.length : NaN;

/** The mean words per spoken turn of the dialogues (of those with a spoken turn); `wordsOf` gives one dialogue's. */
export function meanWordsPerTurn<D extends DialogueForMetrics>(list: D[], wordsOf: (d: D) => number = (d) => wordsPerTurn(d.turns)): number | null {
  return mean(list.map(wordsOf));
}

/** Leakage over the dialogues whose scenario has marked facts; `leakageOf` gives one dialogue's (dialogueLeakage). */
export function leakageMetrics<D extends DialogueForMetrics>(list: D[], leakageOf: (d: D) => DialogueLeakage = (d) => dialogueLeakage(d.turns, d.facts ?? [])): LeakageMetrics | null {
  const marked = list.filter((d) => d.facts && d.facts.length > 0);
  if (marked.length === 0) return null;
  const results = marked.map(leakageOf);
  const positions = results.map((r) => r.first_mention_position).filter((p): p is number => p !== null);
  const withMutual = marked.filter((d) => d.facts?.some((f) => f.kind === 'mutual_friend'));
  return {
    dialogues: marked.length,
    mentioned: positions.length,
    first_mention_position: mean(positions),
    mutual_friend_position: withMutual.length === 0 ? null : mean(results.map((r) => r.position_by_kind.mutual_friend ?? NaN)),
    premature_share: results.filter((r) => r.premature.length > 0).length / marked.length,
    premature_mentions: results.reduce((n, r) => n + r.premature.length, 0),
  };
}

/** The metrics per condition and scenario category (dialogues without a category are left out). */
export function dialogueMetricsByCategory(dialogues: DialogueForMetrics[]): CategoryDialogueMetrics[] {
  const categories = [...new Set(dialogues.map((d) => d.category).filter((c): c is string => c !== undefined))].sort();
  return categories.flatMap((category) => dialogueMetrics(dialogues.filter((d) => d.category === category)).map((m) => ({ ...m, category })));
}

/** Verbosity and shape of the stored dialogues, per condition (mode and model). */
export function dialogueMetrics(dialogues: DialogueForMetrics[]): ConditionDialogueMetrics[] {
  const groups = new Map<string, DialogueForMetrics[]>();
  for (const d of dialogues) {
    const key = `${d.mode}:${d.model}`;
    const list = groups.get(key);
    if (list) list.push(d);
    else groups.set(key, [d]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([condition, list]) => {
      const first = list[0] as DialogueForMetrics;
      const leaves = list.map((d) => d.turns.findIndex((t) => t.action === 'leave'));
      let s1 = 0;
      let s2 = 0;
      list.forEach((d, i) => {
        const at = leaves[i] as number;
        if (at < 0) return;
        if (d.turns[at]?.speaker === 1) s1++;
        else s2++;
      });
      const left = leaves.filter((x) => x >= 0);
      return {
        condition,
        mode: first.mode,
        model: first.model,
        dialogues: list.length,
        turns_per_dialogue: mean(list.map((d) => d.turns.length)),
        words_per_turn: meanWordsPerTurn(list),
        non_verbal_share: mean(list.map((d) => (d.turns.length > 0 ? d.turns.filter((t) => t.action === 'non-verbal' || t.action === 'action').length / d.turns.length : NaN))),
        non_verbal_communication_share: mean(list.map((d) => shareOf(d, 'non-verbal'))),
        physical_action_share: mean(list.map((d) => shareOf(d, 'action'))),
        repetition: mean(list.map((d) => repetition(d.turns) ?? NaN)),
        left_share: list.length > 0 ? left.length / list.length : null,
        left_at_turn: mean(left),
        left_by: { speaker_1: s1, speaker_2: s2 },
        leakage: leakageMetrics(list),
      };
    });
}
