export type DialogueForMetrics = {
  mode: string;
  model: string;
  endReason: string | null;
  turns: { speaker: number; action: string; text: string }[];
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
  /** Share of a speaker's word trigrams that already occurred in that speaker's earlier turns, averaged over dialogues. */
  repetition: number | null;
  /** Share of dialogues in which a character left, and the mean turn index (0-based) of the leaving turn. */
  left_share: number | null;
  left_at_turn: number | null;
  /** Who left: counts by speaker 1 or 2. */
  left_by: { speaker_1: number; speaker_2: number };
};

export function countWords(text: string): number {
  const t = text.trim();
  return t === '' ? 0 : t.split(/\s+/).length;
}

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
        words_per_turn: mean(list.map((d) => wordsPerTurn(d.turns))),
        non_verbal_share: mean(list.map((d) => (d.turns.length > 0 ? d.turns.filter((t) => t.action === 'non-verbal' || t.action === 'action').length / d.turns.length : NaN))),
        repetition: mean(list.map((d) => repetition(d.turns) ?? NaN)),
        left_share: list.length > 0 ? left.length / list.length : null,
        left_at_turn: mean(left),
        left_by: { speaker_1: s1, speaker_2: s2 },
      };
    });
}
