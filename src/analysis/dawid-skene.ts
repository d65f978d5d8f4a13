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

/**
 * Dawid and Skene (1979) EM: a confusion matrix per rater and a prior over true labels, initialised from the
 * per-item vote shares. A robustness view: it down-weights raters who disagree with the consensus.
 */
export function dawidSkene(
  input: { item: Int32Array; rater: Int32Array; label: Int32Array | Int8Array; nItems: number; nRaters: number; q: number },
  options: { maxIterations?: number; tolerance?: number } = {},
): DawidSkeneResult {
  const { item, rater, label, nItems, nRaters, q } = input;
  const maxIterations = options.maxIterations ?? 100;
  const tolerance = options.tolerance ?? 1e-7;
  const post = new Float64Array(nItems * q);
  for (let j = 0; j < item.length; j++) post[(item[j] as number) * q + (label[j] as number)]! += 1;
  normaliseRows(post, nItems, q);
  const confusion = new Float64Array(nRaters * q * q);
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
      const base = (rater[j] as number) * q * q;
      const i = item[j] as number;
      const l = label[j] as number;
      for (let k = 0; k < q; k++) confusion[base + k * q + l]! += post[i * q + k] as number;
    }
    normaliseRows(confusion, nRaters * q, q);
    // E step.
    for (let i = 0; i < nItems; i++) for (let k = 0; k < q; k++) logPost[i * q + k] = Math.log(prior[k] as number);
    for (let j = 0; j < item.length; j++) {
      const base = (rater[j] as number) * q * q;
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
  const accuracy = new Float64Array(nRaters);
  for (let r = 0; r < nRaters; r++) for (let k = 0; k < q; k++) accuracy[r]! += (prior[k] as number) * (confusion[r * q * q + k * q + k] as number);
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
  return { class_prior: Array.from(prior), rater_accuracy: accuracy, item_label: itemLabel, expected_items: expected, iterations, converged };
}

function normaliseRows(m: Float64Array, rows: number, q: number): void {
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let k = 0; k < q; k++) s += m[r * q + k] as number;
    if (s > 0) for (let k = 0; k < q; k++) m[r * q + k]! /= s;
  }
}
