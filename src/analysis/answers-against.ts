import type { JudgmentTable } from './judgment-table.js';

/**
 * One question's answers on the pairs that set a reference condition (the real one, HUMANS:human) against another, as
 * the realism analysis and the 2×2 read them (issue 53): per answer, which other condition it was, whether that other
 * one was chosen, and the rater and scenario it clusters by. Ties are left out and counted (a which-is-real question
 * has none; a naturalness question may).
 */
export type AnswersAgainst = {
  reference: string;
  /** The other conditions, in the order their comparisons first appear. */
  conditions: string[];
  condition: Int32Array;
  /** The pair (item) answered. */
  item: Int32Array;
  /** 1 when the other condition was chosen (taken for real, or judged more natural), 0 when the reference was. */
  chosen: Float64Array;
  rater: Int32Array;
  /** Scenario codes; an item of no known scenario is a cluster of its own. */
  scenario: Int32Array;
  /** 1-5, 0 for none. */
  confidence: Int8Array;
  ties: number;
};

export function answersAgainst(t: JudgmentTable, reference: string): AnswersAgainst {
  const conditions: string[] = [];
  const otherOf = t.comparisons.map((c) => {
    const side = c.a === reference ? 0 : c.b === reference ? 1 : -1;
    if (side < 0) return { side, index: -1 };
    const other = side === 0 ? c.b : c.a;
    if (!conditions.includes(other)) conditions.push(other);
    return { side, index: conditions.indexOf(other) };
  });
  const condition: number[] = [];
  const item: number[] = [];
  const chosen: number[] = [];
  const rater: number[] = [];
  const scenario: number[] = [];
  const confidence: number[] = [];
  let ties = 0;
  for (let j = 0; j < t.n; j++) {
    const i = t.item[j] as number;
    const other = otherOf[t.itemComparison[i] as number];
    if (!other || other.side < 0) continue;
    const outcome = t.outcome[j] as number;
    if (outcome === 2) {
      ties++;
      continue;
    }
    condition.push(other.index);
    item.push(i);
    chosen.push(outcome === other.side ? 0 : 1);
    rater.push(t.rater[j] as number);
    const s = t.itemScenario[i] as number;
    scenario.push(s >= 0 ? s : t.scenarioNames.length + i);
    confidence.push(t.confidence?.[j] ?? 0);
  }
  return {
    reference,
    conditions,
    condition: Int32Array.from(condition),
    item: Int32Array.from(item),
    chosen: Float64Array.from(chosen),
    rater: Int32Array.from(rater),
    scenario: Int32Array.from(scenario),
    confidence: Int8Array.from(confidence),
    ties,
  };
}

/** The answers about one of the other conditions (its index in `conditions`). */
export function answersFor(a: AnswersAgainst, index: number): Pick<AnswersAgainst, 'chosen' | 'rater' | 'scenario' | 'confidence'> {
  const rows: number[] = [];
  for (let k = 0; k < a.condition.length; k++) if (a.condition[k] === index) rows.push(k);
  return {
    chosen: Float64Array.from(rows, (k) => a.chosen[k] as number),
    rater: Int32Array.from(rows, (k) => a.rater[k] as number),
    scenario: Int32Array.from(rows, (k) => a.scenario[k] as number),
    confidence: Int8Array.from(rows, (k) => a.confidence[k] as number),
  };
}
