import type { LookPoint } from './sequential-rule.js';
import { lookPoint } from './sequential-rule.js';

// Looks at a comparison whose maximum was raised by reallocation (issues 44 and 51; docs/researcher/sequential-batches.md,
// "Reallocation"). Pure. A raise is a change of sample size that depends on data (another comparison's stop, and
// through shared raters and conditions, this one's): reading the spending function at fractions of the new maximum
// does not hold the error rate then. So the comparison keeps its original design, and its later pairs enter the
// statistic with weights fixed when the maximum rose: the weighted inverse-normal statistic of Cui, Hung & Wang (1999,
// Biometrics 55: 853-857), as in Lehmacher & Wassmer (1999). At a raise after look j, the information fraction t_j
// reached stays; the design's remaining 1 - t_j is spread over the pairs still to complete, so a later look with c
// completed pairs of the new maximum N stands at t = t_j + (1 - t_j)(c - c_j)/(N - c_j), and the pairs that entered
// after look j weigh (t - t_j) in the statistic, however many they are: each stage's pairs share its weight,
// u_i = sqrt(w_s / n_s). With those weights the statistic has the original design's null law whatever the raise.

/**
 * A look already taken, as stored: where it stood, the maximum of its time, the completed pairs it counted and its
 * statistic's observed information (null for looks stored before issue 51).
 */
export type PastLook = LookPoint & { maxPairs: number; completed: number; observedInformation: number | null };

/** A stage of the weighted statistic: the pairs that entered at looks up to `untilLook` (1-based; null: to now), and its weight. */
export type Stage = { untilLook: number | null; weight: number };

export type LookPlan = {
  point: LookPoint;
  /** The maximum the design was planned over (futility's drift): the pairs at the first look. */
  designPairs: number;
  /** One stage without a raise (equal weights); one more after each raise. */
  stages: Stage[];
};

/** The comparison now: its pairs, the completed and decisive ones, and the observed information of their statistic. */
export type LookNow = { completed: number; decisive: number; maxPairs: number; final: boolean; observedInformation: number };

/** Where the next look stands and how its pairs are weighed, from the looks taken and the comparison now. */
export function planLook(looks: readonly PastLook[], now: LookNow): LookPlan {
  const designPairs = looks[0]?.maxPairs ?? now.maxPairs;
  // A raise after look j: the maximum of the look after it (or of now) is higher.
  const raisedAfter: number[] = [];
  looks.forEach((look, j) => {
    if (look.maxPairs < (looks[j + 1]?.maxPairs ?? now.maxPairs)) raisedAfter.push(j);
  });
  const anchor = looks[raisedAfter[raisedAfter.length - 1] ?? -1];
  if (!anchor) return { point: observedPoint(looks, now, designPairs), designPairs, stages: [{ untilLook: null, weight: 1 }] };
  const fraction = now.final ? 1 : Math.min(1, anchor.fraction + ((1 - anchor.fraction) * Math.max(0, now.completed - anchor.completed)) / (now.maxPairs - anchor.completed));
  const stages: Stage[] = [];
  let before = 0;
  for (const j of raisedAfter) {
    const at = (looks[j] as PastLook).fraction;
    stages.push({ untilLook: j + 1, weight: at - before });
    before = at;
  }
  stages.push({ untilLook: null, weight: fraction - before });
  return { point: { fraction, information: (anchor.information * fraction) / anchor.fraction }, designPairs, stages };
}

/** The stage of a pair that first entered at look `entered` (1-based; null: entering now). */
export function stageOf(stages: readonly Stage[], entered: number | null): number {
  if (entered === null) return stages.length - 1;
  const i = stages.findIndex((s) => s.untilLook !== null && entered <= s.untilLook);
  return i < 0 ? stages.length - 1 : i;
}

/** Each pair's weight sqrt(w_s / n_s), given the stage of each pair (in order). */
export function stageWeights(stages: readonly Stage[], pairStages: readonly number[]): number[] {
  if (stages.length === 1) return pairStages.map(() => 1);
  const counts = stages.map(() => 0);
  for (const s of pairStages) counts[s] = (counts[s] ?? 0) + 1;
  return pairStages.map((s) => Math.sqrt(Math.max(0, (stages[s] as Stage).weight) / Math.max(1, counts[s] as number)));
}

/**
 * A look with the maximum unchanged: spending at the completed pairs over the maximum (lookPoint); information on the
 * scale of the first look, which stands at its decisive pairs over the maximum, then grows as the observed
 * information does (J&T 7.2). A variance estimated from a few dozen raters is noisy, so the growth is kept at least
 * a quarter of what the completed pairs grew by (MIN_GROWTH): an estimate that fell never loses a due look, and two
 * looks never stand so close that their correlation is taken as one.
 */
function observedPoint(looks: readonly PastLook[], now: LookNow, designPairs: number): LookPoint {
  const plain = lookPoint(now, designPairs);
  const first = looks[0];
  const last = looks[looks.length - 1];
  if (!first || !last || !(first.observedInformation && first.observedInformation > 0) || !(now.observedInformation > 0)) return plain;
  const information = (first.information * now.observedInformation) / first.observedInformation;
  const counted = Math.max(0, now.completed - last.completed) / Math.max(1, last.completed);
  return { fraction: plain.fraction, information: Math.max(information, last.information * (1 + MIN_GROWTH * counted)) };
}

/** The least growth of the information from one look to the next, as a share of the growth of the completed pairs. */
const MIN_GROWTH = 0.25;
