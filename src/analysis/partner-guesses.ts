import { wilsonInterval } from './wilson.js';

// "Was your partner a person or an AI?" (issue 52), asked of every role-play participant at the end, as Mephisto's
// chat tasks ask "Do you think this user is a bot or a human?" and live Turing tests on Prolific ask (Jones & Bergen
// 2025, arXiv 2503.23674). Reported per condition the participant met: the share who judged their partner a person,
// with a Wilson interval (Wilson 1927): among HUMANS, how often a person is taken for one; among HUMAN_AGENT:M, how
// often the model passes for one.

export type GuessInput = { condition: string; guess: 'person' | 'ai' };

export type GuessRow = {
  /** The condition of the dialogue the participant was in (HUMANS:human, HUMAN_AGENT:model). */
  condition: string;
  /** What the partner was: a person (HUMANS) or the model (HUMAN_AGENT). */
  partner: 'person' | 'ai';
  answers: number;
  judged_person: number;
  share: number | null;
  ci95: [number, number] | null;
};

/** Conditions with a person as partner first, then the models, each by name. */
function order(a: GuessRow, b: GuessRow): number {
  return a.partner === b.partner ? a.condition.localeCompare(b.condition) : a.partner === 'person' ? -1 : 1;
}

export function partnerGuessShares(inputs: readonly GuessInput[]): GuessRow[] {
  const by = new Map<string, { answers: number; person: number }>();
  for (const input of inputs) {
    const row = by.get(input.condition) ?? { answers: 0, person: 0 };
    row.answers += 1;
    if (input.guess === 'person') row.person += 1;
    by.set(input.condition, row);
  }
  return [...by]
    .map(([condition, r]) => ({
      condition,
      partner: condition.startsWith('HUMAN_AGENT:') ? ('ai' as const) : ('person' as const),
      answers: r.answers,
      judged_person: r.person,
      share: r.answers > 0 ? r.person / r.answers : null,
      ci95: wilsonInterval(r.person, r.answers),
    }))
    .sort(order);
}
