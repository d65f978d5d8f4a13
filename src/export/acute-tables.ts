import { binomialTestP } from '../numbers/binomial-test.js';

// ACUTE-Eval's analysis tables (Li, Weston & Roller 2019; ParlAI's acute_eval/analysis.py), computed the same way
// so results line up with published ACUTE-Eval numbers:
// - winrate is wins over every rating of the matchup (ties count in the denominator; ACUTE-Eval itself had none),
// - numratings, the binomial test and `agree` use the decisive ratings only,
// - `agree` is the mean over pairs of the majority share of the pair's decisive ratings; a pair with one rating is
//   skipped and a 1-1 split counts as 0, exactly as ParlAI does.

export type PairVotes = { model1: string; model2: string; wins1: number; wins2: number; ties: number };

type Matchup = { model1: string; model2: string; wins1: number; wins2: number; ties: number; agreementSum: number; agreementCount: number };

export type SignificanceRow = {
  question: string;
  matchup: string;
  model1: string;
  numwins1: number;
  winrate1: number | null;
  model2: string;
  numwins2: number;
  winrate2: number | null;
  numratings: number;
  sigf: string;
  stars: string;
  p: number | null;
  agree: number | null;
  ties: number;
};

export const SIGNIFICANCE_COLUMNS = [
  'question',
  'matchup',
  'model1',
  'numwins1',
  'winrate1',
  'model2',
  'numwins2',
  'winrate2',
  'numratings',
  'sigf',
  'stars',
  'p',
  'agree',
  'ties',
] as const;

function significanceLevel(p: number | null): { stars: string; sigf: string } {
  if (p === null) return { stars: '', sigf: '' };
  if (p < 0.001) return { stars: '***', sigf: 'p<.001' };
  if (p < 0.01) return { stars: '**', sigf: 'p<.01' };
  if (p < 0.05) return { stars: '*', sigf: 'p<.05' };
  return { stars: '', sigf: 'p>.05' };
}

/** Pair agreement as ParlAI computes it, or null when the pair does not count. */
export function pairAgreement(wins1: number, wins2: number): number | null {
  if (wins1 < 2 && wins2 < 2) return wins1 === 1 && wins2 === 1 ? 0 : null;
  return Math.max(wins1, wins2) / (wins1 + wins2);
}

/** Accumulates pairs one at a time (constant memory per matchup), then produces both tables. */
export function createAcuteAccumulator(question: string) {
  const matchups = new Map<string, Matchup>();
  return {
    add(pair: PairVotes): void {
      const key = `${pair.model1}__vs__${pair.model2}`;
      let m = matchups.get(key);
      if (!m) {
        m = { model1: pair.model1, model2: pair.model2, wins1: 0, wins2: 0, ties: 0, agreementSum: 0, agreementCount: 0 };
        matchups.set(key, m);
      }
      m.wins1 += pair.wins1;
      m.wins2 += pair.wins2;
      m.ties += pair.ties;
      const agreement = pairAgreement(pair.wins1, pair.wins2);
      if (agreement !== null) {
        m.agreementSum += agreement;
        m.agreementCount++;
      }
    },
    significance(): SignificanceRow[] {
      return [...matchups.entries()].map(([matchup, m]) => {
        const all = m.wins1 + m.wins2 + m.ties;
        const numratings = m.wins1 + m.wins2;
        const p = binomialTestP(m.wins1, numratings);
        return {
          question,
          matchup,
          model1: m.model1,
          numwins1: m.wins1,
          winrate1: all > 0 ? m.wins1 / all : null,
          model2: m.model2,
          numwins2: m.wins2,
          winrate2: all > 0 ? m.wins2 / all : null,
          numratings,
          ...significanceLevel(p),
          p,
          agree: m.agreementCount > 0 ? m.agreementSum / m.agreementCount : null,
          ties: m.ties,
        };
      });
    },
    /** Win fractions: losers as rows, winners as columns, models ordered by their mean win fraction (ascending). */
    grid(): { models: string[]; cells: (number | null)[][] } {
      const totals = new Map<string, { wins: number; total: number }>();
      const add = (winner: string, loser: string, wins: number, total: number) => {
        const key = JSON.stringify([winner, loser]);
        const cell = totals.get(key) ?? { wins: 0, total: 0 };
        cell.wins += wins;
        cell.total += total;
        totals.set(key, cell);
      };
      for (const m of matchups.values()) {
        const all = m.wins1 + m.wins2 + m.ties;
        add(m.model1, m.model2, m.wins1, all);
        add(m.model2, m.model1, m.wins2, all);
      }
      const fraction = (winner: string, loser: string): number | null => {
        const cell = totals.get(JSON.stringify([winner, loser]));
        return cell && cell.total > 0 ? cell.wins / cell.total : null;
      };
      const models = [...new Set([...matchups.values()].flatMap((m) => [m.model1, m.model2]))];
      const meanAsWinner = new Map(
        models.map((winner) => {
          const fs = models.map((loser) => fraction(winner, loser)).filter((f): f is number => f !== null);
          return [winner, fs.length > 0 ? fs.reduce((s, f) => s + f, 0) / fs.length : 0];
        }),
      );
      models.sort((x, y) => (meanAsWinner.get(x) as number) - (meanAsWinner.get(y) as number) || x.localeCompare(y));
      return { models, cells: models.map((loser) => models.map((winner) => (winner === loser ? null : fraction(winner, loser)))) };
    },
  };
}
