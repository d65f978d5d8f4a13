import { fewestRaters } from './capacity-check.js';

// Which new pairs a stopped comparison's budget buys for the comparisons still open (issue 44;
// docs/researcher/sequential-batches.md, "Reallocation"). Pure: the caller reads the numbers and writes the pairs.

export type ReallocationInput<T extends { sample: string }> = {
  /** Judgments the stopped comparison will no longer buy: the budget, K for each pair added. */
  freed: number;
  judgmentsPerPair: number;
  perRaterCap: number;
  allowSameSample: boolean;
  /** Judgments still owed to open pairs beyond what admitted raters hold, by the pair's scenario sample. */
  openDemands: readonly { sample: string; demand: number }[];
  /** Unused pairs of each open comparison, in the order they would be added. */
  candidates: readonly (readonly T[])[];
  /** Raters admitted so far (each is paid whatever happens next). */
  admitted: number;
  /** Raters the batch pays for at most. */
  budgetRaters: number;
};

export type ReallocationChoice<T> = { chosen: T[]; limitedBy: 'no-unused-pair' | 'raters' | null; ratersAfter: number };

/** Pairs of K judgments the freed judgments pay for. */
export function pairsBought(freed: number, judgmentsPerPair: number): number {
  return Math.floor(freed / judgmentsPerPair);
}

/**
 * The fewest raters, each at most `perRaterCap` pairs and (unless allowed) one pair per scenario sample, with whom the
 * demands can all be met: Gale-Ryser as in the launch's capacity check (capacity-check.ts).
 */
function ratersFor(demands: readonly { sample: string; demand: number }[], perRaterCap: number, allowSameSample: boolean): number {
  const units = allowSameSample ? demands.map((d) => d.demand) : [...sumBySample(demands).values()];
  const positive = units.filter((d) => d > 0);
  if (positive.length === 0) return 0;
  return fewestRaters(positive, Math.min(perRaterCap, positive.length));
}

function sumBySample(demands: readonly { sample: string; demand: number }[]): Map<string, number> {
  const bySample = new Map<string, number>();
  for (const d of demands) bySample.set(d.sample, (bySample.get(d.sample) ?? 0) + d.demand);
  return bySample;
}

/**
 * Adds unused pairs one at a time, taking the open comparisons in turn, while the freed judgments pay for more. A pair is
 * added only if the raters admitted plus the fewest still needed for every open pair (the new ones at K judgments)
 * stay within the budget, so no pair is added that the rater pool cannot reach within what the batch pays for, and the
 * judgments to buy never exceed those the stopped comparison gave up.
 */
export function chooseReallocation<T extends { sample: string }>(input: ReallocationInput<T>): ReallocationChoice<T> {
  const demands = [...input.openDemands];
  const wanted = pairsBought(input.freed, input.judgmentsPerPair);
  const chosen: T[] = [];
  const next = input.candidates.map(() => 0);
  let refusedForRaters = false;
  const fits = () => input.admitted + ratersFor(demands, input.perRaterCap, input.allowSameSample) <= input.budgetRaters;
  let progressed = true;
  while (chosen.length < wanted && progressed) {
    progressed = false;
    for (const [c, list] of input.candidates.entries()) {
      if (chosen.length >= wanted) break;
      // This comparison's next candidate that fits, if any (one that does not fit may be followed by one that does:
      // a fresh sample is easier to reach than one whose other pairs already need raters).
      while ((next[c] as number) < list.length) {
        const candidate = list[next[c] as number] as T;
        next[c] = (next[c] as number) + 1;
        demands.push({ sample: candidate.sample, demand: input.judgmentsPerPair });
        if (fits()) {
          chosen.push(candidate);
          progressed = true;
          break;
        }
        demands.pop();
        refusedForRaters = true;
      }
    }
  }
  const limitedBy = chosen.length >= wanted ? null : refusedForRaters ? 'raters' : 'no-unused-pair';
  return { chosen, limitedBy, ratersAfter: input.admitted + ratersFor(demands, input.perRaterCap, input.allowSameSample) };
}

/** Raters a pair set needs from scratch at K judgments a pair: the budget when the batch names no plannedRaters. */
export function ratersForDesign(pairSamples: readonly string[], judgmentsPerPair: number, perRaterCap: number, allowSameSample: boolean): number {
  return ratersFor(
    pairSamples.map((sample) => ({ sample, demand: judgmentsPerPair })),
    perRaterCap,
    allowSameSample,
  );
}
