export type DawidSkeneResult = {
  /** Estimated share of items whose true label is each category. */
  class_prior: number[];
  /** Per rater: estimated probability of giving the true label (sum_k prior_k * confusion_kk). */
  rater_accuracy: Float64Array;
  /** Per item: most probable true label (category index). */
  item_label: Int32Array;
  /** Expected number of items per true label (sum of posteriors). */
  expected_items: number[];
  iterations: number;
  converged: boolean;
};

/** Screen-side states of a judgment: the first condition shown on the left, the second, or not known. */
const SIDES = 3;

/**
 * Dawid and Skene (1979) EM: a confusion matrix per rater and a prior over true labels, initialised from the
 * per-item vote shares. A robustness view: it down-weights raters who disagree with the consensus.
 *
 * Position-aware (issue 51): with `side` (0: label 0's condition was shown on the left, 1: label 1's, -1: not known),
 * each rater has one confusion matrix per side. Without it, a rater who always chose the left side got the highest
 * accuracy of the batch when the other raters agreed little: with sides counterbalanced, always-left labels look like
 * a random but perfectly consistent truth, and EM took the true labels to be that rater's, who then looked perfect
 * (test/analysis/dawid-skene-position.test.ts). Per side, such a rater's answer is the same whatever the true label,
 * so it carries no weight in the posterior, and their accuracy is about one half on decisive labels. Judgments of
 * unknown side share a third matrix, so a file without sides is fitted exactly as the original model.
 */
export function dawidSkene(
  input: { item: Int32Array; rater: Int32Array; label: Int32Array | Int8Array; side?: Int8Array; nItems: number; nRaters: number; q: number },
  options: { maxIterations?: number; tolerance?: number } = {},
): DawidSkeneResult {
  const { item, rater, label, nItems, nRaters, q } = input;
  const maxIterations = options.maxIterations ?? 100;
  const tolerance = options.tolerance ?? 1e-7;
  // The confusion matrix a judgment reads: its rater's, for its side.
  const matrixOf = new Int32Array(item.length);
  for (let j = 0; j < item.length; j++) {
    const side = input.side?.[j] ?? -1;
    matrixOf[j] = (rater[j] as number) * SIDES + (side === 0 || side === 1 ? side : 2);
  }
  const post = new Float64Array(nItems * q);
  for (let j = 0; j < item.length; j++) post[(item[j] as number) * q + (label[j] as number)]! += 1;
  normaliseRows(post, nItems, q);
  const confusion = new Float64Array(nRaters * SIDES * q * q);
  const prior = new Float64Array(q);
  const logPost = new Float64Array(nItems * q);
  let iterations = 0;
  let converged = false;
  for (; iterations < maxIterations; ) {
    iterations++;
    // M step: priors and confusion matrices from the current posteriors (small smoothing keeps logs finite).
    prior.fill(0);
    for (let i = 0; i < nItems; i++) for (let k = 0; k < q; k++) prior[k]! += post[i * q + k] as number;
    for (let k = 0; k < q; k++) prior[k] = ((prior[k] as number) + 0.01) / (nItems + 0.01 * q);
    confusion.fill(0.01);
    for (let j = 0; j < item.length; j++) {
      const base = (matrixOf[j] as number) * q * q;
      const i = item[j] as number;
      const l = label[j] as number;
      for (let k = 0; k < q; k++) confusion[base + k * q + l]! += post[i * q + k] as number;
    }
    normaliseRows(confusion, nRaters * SIDES * q, q);
    // E step.
    for (let i = 0; i < nItems; i++) for (let k = 0; k < q; k++) logPost[i * q + k] = Math.log(prior[k] as number);
    for (let j = 0; j < item.length; j++) {
      const base = (matrixOf[j] as number) * q * q;
      const i = item[j] as number;
      const l = label[j] as number;
      for (let k = 0; k < q; k++) logPost[i * q + k]! += Math.log(confusion[base + k * q + l] as number);
    }
    let change = 0;
    for (let i = 0; i < nItems; i++) {
      let max = -Infinity;
      for (let k = 0; k < q; k++) max = Math.max(max, logPost[i * q + k] as number);
      let sum = 0;
      for (let k = 0; k < q; k++) sum += Math.exp((logPost[i * q + k] as number) - max);
      for (let k = 0; k < q; k++) {
        const v = Math.exp((logPost[i * q + k] as number) - max) / sum;
        change = Math.max(change, Math.abs(v - (post[i * q + k] as number)));
        post[i * q + k] = v;
      }
    }
    if (change < tolerance) {
      converged = true;
      break;
    }
  }
  return { class_prior: Array.from(prior), rater_accuracy: raterAccuracy(confusion, prior, matrixOf, nRaters, q), ...itemLabels(post, nItems, q), iterations, converged };
}

/**
 * Per rater, the chance of giving the true label: sum over true labels of prior times the confusion's diagonal, each
 * side's matrix weighted by the share of the rater's judgments shown that way.
 */
function raterAccuracy(confusion: Float64Array, prior: Float64Array, matrixOf: Int32Array, nRaters: number, q: number): Float64Array {
  const perMatrix = new Float64Array(nRaters * SIDES);
  for (let j = 0; j < matrixOf.length; j++) perMatrix[matrixOf[j] as number]! += 1;
  const accuracy = new Float64Array(nRaters);
  for (let r = 0; r < nRaters; r++) {
    let judged = 0;
    for (let s = 0; s < SIDES; s++) judged += perMatrix[r * SIDES + s] as number;
    for (let s = 0; s < SIDES; s++) {
      const weight = judged > 0 ? (perMatrix[r * SIDES + s] as number) / judged : s === 2 ? 1 : 0;
      const base = (r * SIDES + s) * q * q;
      for (let k = 0; k < q; k++) accuracy[r]! += weight * (prior[k] as number) * (confusion[base + k * q + k] as number);
    }
  }
  return accuracy;
}

/** Each item's most probable true label, and the expected number of items per true label. */
function itemLabels(post: Float64Array, nItems: number, q: number): { item_label: Int32Array; expected_items: number[] } {
  const itemLabel = new Int32Array(nItems);
  const expected = new Array<number>(q).fill(0);
  for (let i = 0; i < nItems; i++) {
    let best = 0;
    for (let k = 0; k < q; k++) {
      expected[k]! += post[i * q + k] as number;
      if ((post[i * q + k] as number) > (post[i * q + best] as number)) best = k;
    }
    itemLabel[i] = best;
  }
  return { item_label: itemLabel, expected_items: expected };
}

function normaliseRows(m: Float64Array, rows: number, q: number): void {
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let k = 0; k < q; k++) s += m[r * q + k] as number;
    if (s > 0) for (let k = 0; k < q; k++) m[r * q + k]! /= s;
  }
}
