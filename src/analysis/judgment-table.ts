/**
 * Judgments held column-wise in typed arrays, with names interned once: the shape every statistic in analyze.ts
 * reads, so 1M judgments cost a few megabytes and one pass instead of a million objects.
 * Outcome codes: 0 = a won, 1 = b won, 2 = tie. Left codes: 0 = a shown left, 1 = b shown left, -1 = unknown.
 */
export type JudgmentTable = {
  n: number;
  item: Int32Array;
  rater: Int32Array;
  outcome: Int8Array;
  left: Int8Array;
  /** Active time in seconds, NaN when unknown. */
  seconds: Float64Array;
  /** The rater's confidence 1-5 in a which-is-real answer (issue 53), 0 for none; absent when no answer has one. */
  confidence?: Int8Array;
  itemNames: string[];
  raterNames: string[];
  /** Per item: its comparison, scenario and category (-1 when unknown) and words per turn of each dialogue (NaN when unknown). */
  itemComparison: Int32Array;
  itemScenario: Int32Array;
  itemCategory: Int32Array;
  itemWordsA: Float64Array;
  itemWordsB: Float64Array;
  comparisons: { a: string; b: string }[];
  scenarioNames: string[];
  categoryNames: string[];
};

export type JudgmentRowInput = {
  item: string;
  rater: string;
  conditionA: string;
  conditionB: string;
  outcome: 0 | 1 | 2;
  left: -1 | 0 | 1;
  seconds: number;
  /** 1-5, or 0 (or absent) for none. */
  confidence?: number;
  aWords: number;
  bWords: number;
  scenario: string | null;
  category: string | null;
};

export type JudgmentTableBuilder = {
  /** Adds one judgment; returns the problem as text (a pair with two pairs of conditions) or null when accepted. */
  add(row: JudgmentRowInput): string | null;
  build(): JudgmentTable;
  readonly size: number;
};

function interner() {
  const index = new Map<string, number>();
  const names: string[] = [];
  return {
    names,
    id(name: string): number {
      let i = index.get(name);
      if (i === undefined) {
        i = names.length;
        index.set(name, i);
        names.push(name);
      }
      return i;
    },
    has: (name: string) => index.get(name),
  };
}

export function createJudgmentTableBuilder(): JudgmentTableBuilder {
  const items = interner();
  const raters = interner();
  const comparisons = interner();
  const scenarios = interner();
  const categories = interner();
  const item: number[] = [];
  const rater: number[] = [];
  const outcome: number[] = [];
  const left: number[] = [];
  const seconds: number[] = [];
  // Only batches with a which-is-real question have confidences: the column is made at the first one given.
  let confidence: number[] | null = null;
  const itemComparison: number[] = [];
  const itemConditions: [string, string][] = [];
  const itemScenario: number[] = [];
  const itemCategory: number[] = [];
  const itemWordsA: number[] = [];
  const itemWordsB: number[] = [];
  return {
    get size() {
      return item.length;
    },
    add(row) {
      if (row.conditionA === row.conditionB) return `condition_a and condition_b are the same (${row.conditionA})`;
      // A known item's conditions are compared as they are: its comparison's key built again for each of a million rows
      // (a string joined, then hashed), with a row object made for each by the caller, took about a quarter of the
      // analysis worker's read (issue 12).
      let i = items.has(row.item);
      if (i === undefined) {
        i = items.id(row.item);
        itemComparison.push(comparisons.id(`${row.conditionA}\u0000${row.conditionB}`));
        itemConditions.push([row.conditionA, row.conditionB]);
        itemScenario.push(row.scenario === null ? -1 : scenarios.id(row.scenario));
        itemCategory.push(row.category === null ? -1 : categories.id(row.category));
        itemWordsA.push(row.aWords);
        itemWordsB.push(row.bWords);
      } else {
        const [a, b] = itemConditions[i] as [string, string];
        if (a !== row.conditionA || b !== row.conditionB) return `item ${row.item} appears with two different pairs of conditions`;
        if (Number.isNaN(itemWordsA[i]) && !Number.isNaN(row.aWords)) itemWordsA[i] = row.aWords;
        if (Number.isNaN(itemWordsB[i]) && !Number.isNaN(row.bWords)) itemWordsB[i] = row.bWords;
      }
      item.push(i);
      rater.push(raters.id(row.rater));
      outcome.push(row.outcome);
      left.push(row.left);
      seconds.push(row.seconds);
      if (row.confidence) {
        confidence ??= new Array<number>(item.length - 1).fill(0);
        confidence.push(row.confidence);
      } else confidence?.push(0);
      return null;
    },
    build() {
      return {
        n: item.length,
        item: Int32Array.from(item),
        rater: Int32Array.from(rater),
        outcome: Int8Array.from(outcome),
        left: Int8Array.from(left),
        seconds: Float64Array.from(seconds),
        ...(confidence ? { confidence: Int8Array.from(confidence) } : {}),
        itemNames: items.names,
        raterNames: raters.names,
        itemComparison: Int32Array.from(itemComparison),
        itemScenario: Int32Array.from(itemScenario),
        itemCategory: Int32Array.from(itemCategory),
        itemWordsA: Float64Array.from(itemWordsA),
        itemWordsB: Float64Array.from(itemWordsB),
        comparisons: comparisons.names.map((key) => {
          const [a, b] = key.split('\u0000') as [string, string];
          return { a, b };
        }),
        scenarioNames: scenarios.names,
        categoryNames: categories.names,
      };
    },
  };
}

/**
 * The first judgment (in row order) that repeats an (item, rater) pair, or null. Rows are bucketed by item
 * (counting sort) and each bucket checked with a per-rater stamp: linear time, no hash set of a million keys.
 */
export function findDuplicateJudgment(t: JudgmentTable): { row: number; item: string; rater: string } | null {
  const nItems = t.itemNames.length;
  const start = new Int32Array(nItems + 1);
  for (let j = 0; j < t.n; j++) start[(t.item[j] as number) + 1]! += 1;
  for (let i = 0; i < nItems; i++) start[i + 1]! += start[i] as number;
  const fill = Int32Array.from(start.subarray(0, nItems));
  const order = new Int32Array(t.n);
  for (let j = 0; j < t.n; j++) order[fill[t.item[j] as number]!++] = j;
  const stamp = new Int32Array(t.raterNames.length).fill(-1);
  let first = -1;
  for (let i = 0; i < nItems; i++) {
    for (let x = start[i] as number; x < (start[i + 1] as number); x++) {
      const j = order[x] as number;
      const r = t.rater[j] as number;
      if (stamp[r] === i) {
        if (first < 0 || j < first) first = j;
      } else stamp[r] = i;
    }
  }
  if (first < 0) return null;
  return { row: first, item: t.itemNames[t.item[first] as number] as string, rater: t.raterNames[t.rater[first] as number] as string };
}
