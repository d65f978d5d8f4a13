import type { Action } from '../generation/mode.js';

export type VariantTurn = { speaker: 1 | 2; action: Action; text: string };
export type GoldVariant = { variant: 'shuffled' | 'repeated'; turns: VariantTurn[] };

/**
 * A known-worse copy of a coherent dialogue for onboarding and attention checks: its turns shuffled out of order,
 * or (for short dialogues, where a shuffle may still read well) its opening repeated as a loop. An attentive rater
 * prefers the original; this is the "coherent vs. corrupted" check used in crowdsourced dialogue evaluation
 * (e.g. Mehri & Eskenazi 2020; Li et al. 2019, ACUTE-Eval's control pairs).
 */
export function deriveGoldVariant(turns: VariantTurn[], random: () => number): GoldVariant {
  const visible = turns.filter((t) => t.action !== 'none');
  const closing = visible.at(-1)?.action === 'leave' ? visible.slice(-1) : [];
  const body = closing.length > 0 ? visible.slice(0, -1) : visible;
  if (body.length >= 4) {
    const shuffled = [...body];
    for (let attempt = 0; attempt < 10; attempt += 1) {
      for (let i = shuffled.length - 1; i > 0; i -= 1) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j] as VariantTurn, shuffled[i] as VariantTurn];
      }
      // A shuffle that leaves the opening in place reads almost like the original; reshuffle.
      if (shuffled[0] !== body[0] && shuffled.some((t, i) => t !== body[i])) break;
    }
    if (shuffled.some((t, i) => t !== body[i])) return { variant: 'shuffled', turns: [...shuffled, ...closing] };
  }
  const opening = body.slice(0, Math.max(1, Math.ceil(body.length / 2)));
  return { variant: 'repeated', turns: [...opening, ...opening, ...opening, ...body.slice(opening.length), ...closing] };
}
