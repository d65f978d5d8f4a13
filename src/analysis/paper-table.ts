import { type DialogueForMetrics, leakageMetrics, meanWordsPerTurn, wordsPerTurn } from './dialogue-metrics.js';
import { dialogueLeakage } from './information-leakage.js';
import {
  type JudgeAnswer,
  type JudgeHumanAgreement,
  type JudgePositionBias,
  type Verdict,
  humanMajorities,
  judgeHumanAgreement,
  judgePositionBias,
  judgeVerdicts,
} from './llm-judge-agreement.js';
import { REAL_REFERENCE } from './two-by-two.js';
import { Z95, wilsonInterval } from './wilson.js';

// One table a paper can use (issue 15), laid out like Zhou et al. 2024's: per condition (and per scenario category)
// the human naturalness win rate, the LLM judge's, goal completion and believability from a judge model's episode
// evaluation, deal rate, information leakage and words per turn. Which figures come from a model is said in the
// report's notes; the published figures are for comparison by eye and are not in the code.

export type PaperJudgment = { pair: string; conditionA: string; conditionB: string; category: string | null; winner: Verdict };
export type PaperJudgeAnswer = JudgeAnswer & { conditionA: string; conditionB: string; category: string | null };
export type PaperDialogue = DialogueForMetrics & { id: number; condition: string; category: string };
export type PaperScore = { dialogueId: number; speaker: 1 | 2; dimension: string; score: number };
export type PaperDeal = { dialogueId: number; reached: boolean; price: number | null };

export type PaperInput = {
  /** A batch's table has human judgments and may have an LLM judge; a run's table has neither. */
  of?: 'batch' | 'run';
  judgments: PaperJudgment[];
  judge: { name: string; judge_model: string; prompt_version: string } | null;
  judgeAnswers: PaperJudgeAnswer[];
  evaluations: { name: string; judge_model: string; prompt_version: string }[];
  dialogues: PaperDialogue[];
  /** For each dialogue, the scores of one evaluation (the latest that scored it). */
  scores: PaperScore[];
  deals: PaperDeal[];
  /**
   * Issue 53: a which-is-real question's answers, as judgments whose winner is the conversation chosen as the real one;
   * null or absent without one.
   */
  realism?: { real: string; judgments: PaperJudgment[] } | null;
};

export type Rate = { n: number; rate: number | null; ci95: [number, number] | null };
export type MeanCi = { n: number; mean: number | null; ci95: [number, number] | null };

export type PaperRow = {
  condition: string;
  /** `all` or a scenario category. */
  scope: string;
  dialogues: number;
  human_win_rate: Rate;
  /** Issue 52: the win rate in its comparisons against HUMANS:human only (n 0 for HUMANS:human itself and without any). */
  win_rate_vs_humans: Rate;
  /** Issue 53: share of the which-is-real answers that chose its conversation as the real one (n 0 without such a question). */
  judged_real: Rate;
  llm_judge_win_rate: Rate;
  goal: MeanCi;
  believability: MeanCi;
  deal_rate: Rate;
  mean_deal_price: number | null;
  mutual_friend_position: number | null;
  first_mention_position: number | null;
  premature_share: number | null;
  words_per_turn: number | null;
};

export type PaperSection = {
  rows: PaperRow[];
  llm_judge: { name: string; judge_model: string; prompt_version: string; agreement: JudgeHumanAgreement; position_bias: JudgePositionBias } | null;
  evaluations: { name: string; judge_model: string; prompt_version: string }[];
  notes: string[];
};

// Student's t 97.5% quantiles for 1-10 degrees of freedom (standard tables); the expansion is too rough below 11.
const T975 = [12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852];

/** Two-sided 95% (97.5% one-sided) quantile of Student's t: tabled to 10 degrees of freedom, Cornish-Fisher expansion above. */
export function tQuantile975(df: number): number {
  const tabled = T975[df - 1];
  if (tabled !== undefined) return tabled;
  const z = Z95;
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) + (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3);
}

/**
 * Sotopia-Eval's scale of goal completion and believability (sotopia/envs/evaluators.py; DIMENSION_RANGES of
 * src/evaluation/episode-output.schema.ts).
 */
export const SOTOPIA_SCORE_SCALE: [number, number] = [0, 10];

/**
 * Mean with a t interval; each value is one dialogue (the mean of its two characters), so characters of one dialogue are
 * not counted as independent. With `scale`, the interval is clipped to it: near the top of a 0-10 score (judges often
 * give 9 and 10) the t interval reached 10.31, a mean no dialogue can have (issue 40). Clipping keeps the t interval's
 * bounds inside the scale and does not lower its coverage, since the true mean lies within the scale; the report's
 * notes say so.
 */
export function meanWithCi(values: number[], scale?: [number, number]): MeanCi {
  const n = values.length;
  if (n === 0) return { n, mean: null, ci95: null };
  const mean = values.reduce((s, x) => s + x, 0) / n;
  if (n === 1) return { n, mean, ci95: null };
  const sd = Math.sqrt(values.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  const half = (tQuantile975(n - 1) * sd) / Math.sqrt(n);
  const [lo, hi] = scale ?? [-Infinity, Infinity];
  return { n, mean, ci95: [Math.max(lo, mean - half), Math.min(hi, mean + half)] };
}

function rate(successes: number, n: number): Rate {
  return { n, rate: n > 0 ? successes / n : null, ci95: wilsonInterval(successes, n) };
}

/**
 * Each condition's win rate over the judgments in which it took part, ties excluded, in every scope (all, and the
 * judgment's category), counted in one pass: at a million human judgments, filtering them again for each row of the
 * table was a fifth of a batch analysis (issue 12).
 */
function winRates(rows: { conditionA: string; conditionB: string; category: string | null; winner: Verdict }[]): (condition: string, scope: string) => Rate {
  const tallies = new Map<string, Map<string, { wins: number; decisive: number }>>();
  const count = (condition: string, scope: string, won: boolean) => {
    let byScope = tallies.get(condition);
    if (!byScope) tallies.set(condition, (byScope = new Map()));
    let tally = byScope.get(scope);
    if (!tally) byScope.set(scope, (tally = { wins: 0, decisive: 0 }));
    tally.decisive += 1;
    if (won) tally.wins += 1;
  };
  for (const r of rows) {
    if (r.winner === 'tie') continue;
    count(r.conditionA, 'all', r.winner === 'a');
    count(r.conditionB, 'all', r.winner === 'b');
    if (r.category === null || r.category === 'all') continue;
    count(r.conditionA, r.category, r.winner === 'a');
    count(r.conditionB, r.category, r.winner === 'b');
  }
  return (condition, scope) => {
    const tally = tallies.get(condition)?.get(scope);
    return rate(tally?.wins ?? 0, tally?.decisive ?? 0);
  };
}

function dialogueMean(scores: PaperScore[], dimension: string, ids: Set<number>): number[] {
  const byDialogue = new Map<number, number[]>();
  for (const s of scores) if (s.dimension === dimension && ids.has(s.dialogueId)) byDialogue.set(s.dialogueId, [...(byDialogue.get(s.dialogueId) ?? []), s.score]);
  return [...byDialogue.values()].map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
}

/** `of` found once per dialogue. */
function perDialogue<T>(of: (d: PaperDialogue) => T): (d: PaperDialogue) => T {
  const found = new Map<PaperDialogue, T>();
  return (d) => {
    if (!found.has(d)) found.set(d, of(d));
    return found.get(d) as T;
  };
}

export function paperSection(input: PaperInput): PaperSection {
  // A dialogue is in two scopes (all, its category): its words and leakage are found once. Only these two of the
  // dialogue metrics are read here; computing them all (repetition, shares) for every scope was three quarters of a
  // batch analysis at a million judgments, a few seconds each time the worker refreshed it (issue 12).
  const wordsOf = perDialogue((d) => wordsPerTurn(d.turns));
  const leakageOf = perDialogue((d) => dialogueLeakage(d.turns, d.facts ?? []));
  const humanWinRate = winRates(input.judgments);
  const vsHumans = winRates(input.judgments.filter((r) => r.conditionA === REAL_REFERENCE || r.conditionB === REAL_REFERENCE));
  const judgedReal = winRates(input.realism?.judgments ?? []);
  const judgeWinRate = winRates(input.judgeAnswers);
  const conditions = [...new Set(input.dialogues.map((d) => d.condition))].sort();
  const categories = [...new Set(input.dialogues.map((d) => d.category))].sort();
  const rows: PaperRow[] = [];
  for (const condition of conditions) {
    for (const scope of ['all', ...categories]) {
      const inScope = <T extends { category: string | null }>(x: T) => scope === 'all' || x.category === scope;
      const dialogues = input.dialogues.filter((d) => d.condition === condition && inScope(d));
      if (dialogues.length === 0) continue;
      const ids = new Set(dialogues.map((d) => d.id));
      const deals = input.deals.filter((d) => ids.has(d.dialogueId));
      const reached = deals.filter((d) => d.reached);
      const prices = reached.map((d) => d.price).filter((p): p is number => p !== null);
      const leaks = leakageMetrics(dialogues, leakageOf);
      rows.push({
        condition,
        scope,
        dialogues: dialogues.length,
        human_win_rate: humanWinRate(condition, scope),
        win_rate_vs_humans: condition === REAL_REFERENCE ? rate(0, 0) : vsHumans(condition, scope),
        judged_real: judgedReal(condition, scope),
        llm_judge_win_rate: judgeWinRate(condition, scope),
        goal: meanWithCi(dialogueMean(input.scores, 'goal', ids), SOTOPIA_SCORE_SCALE),
        believability: meanWithCi(dialogueMean(input.scores, 'believability', ids), SOTOPIA_SCORE_SCALE),
        deal_rate: rate(reached.length, deals.length),
        mean_deal_price: prices.length > 0 ? prices.reduce((a, b) => a + b, 0) / prices.length : null,
        mutual_friend_position: leaks?.mutual_friend_position ?? null,
        first_mention_position: leaks?.first_mention_position ?? null,
        premature_share: leaks?.premature_share ?? null,
        words_per_turn: meanWordsPerTurn(dialogues, wordsOf),
      });
    }
  }
  const forBatch = input.of !== 'run';
  const notes = [
    ...(forBatch ? ['Human win rate: share of decisive human judgments won by the condition, in the comparisons it took part in; Wilson 95% interval.'] : []),
    ...(forBatch && input.judgments.some((r) => r.conditionA === REAL_REFERENCE || r.conditionB === REAL_REFERENCE)
      ? [`Vs ${REAL_REFERENCE}: the same, in its comparisons against ${REAL_REFERENCE} only (the people's own conversations).`]
      : []),
    ...(input.realism
      ? [
          `Judged real: share of the which-is-real answers that chose the condition's conversation as the real one; for a condition other than ${input.realism.real}, its detection error rate (Social Simulacra's). Wilson 95% interval here; the realism section gives the rater- and scenario-clustered one and the equivalence test.`,
        ]
      : []),
    'From a model: the LLM judge win rate (each pair asked in both orders), goal completion and believability (Sotopia-Eval, 0-10, mean per dialogue of its two characters, Student t 95% interval over dialogues clipped to the 0-10 scale) and the deal outcome (the judge\u2019s reading of sale scenarios). Everything else is computed from the text.',
    'Leakage: mean relative position (0 = first turn, 1 = last) of the first mention of the mutual friend, and of any fact the other side holds; premature: share of dialogues where a character names the other side\u2019s fact before it was said.',
  ];
  if (input.evaluations.length === 0) notes.push('No episode evaluation covers these dialogues: run simarena evaluate --run RUN --judge-model M for goal, believability and deals.');
  if (!input.judge && forBatch) notes.push('No LLM judge of this batch: run simarena llm-judge --batch ID --judge-model M for the judge\u2019s win rates and its agreement with the humans.');
  const llmJudge = input.judge
    ? {
        ...input.judge,
        agreement: judgeHumanAgreement(judgeVerdicts(input.judgeAnswers), humanMajorities(input.judgments)),
        position_bias: judgePositionBias(input.judgeAnswers),
      }
    : null;
  return { rows, llm_judge: llmJudge, evaluations: input.evaluations, notes };
}
