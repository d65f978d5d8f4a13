// Whether every regular pair of a batch can reach K judgments under its settings (issue 10). Pure: the numbers
// come from create-batch (a planned pair set) or from batch-capacity.ts (a stored one).

export type CapacityInput = {
  judgmentsPerPair: number;
  perRaterCap: number;
  allowSameSample: boolean;
  /** Places the researcher will publish (Prolific places, MTurk assignments); null when not said. */
  plannedRaters: number | null;
  /** The scenario-sample key of every regular pair (pairs of one sample share a key). */
  pairSamples: string[];
  /** Regular pairs a sequential rule stopped (they take no new rater and need no more judgments), not in `pairSamples`. */
  stoppedPairs?: number;
  gold: {
    onboardingWanted: number;
    onboardingPairs: number;
    attentionRate: number | null;
    attentionPairs: number;
    /** Gold pairs whose scenario sample also has regular pairs in the batch. */
    fromRatedSamples: number;
  };
};

export type CapacityProblem = { level: 'error' | 'warning'; message: string; numbers: Record<string, number> };

export type CapacityResult = {
  /** False when some regular pair cannot reach K judgments: creating or opening the batch is refused. */
  ok: boolean;
  pairs: number;
  /** Regular pairs a sequential rule stopped (not counted in `pairs`): the batch has pairs + stoppedPairs. */
  stoppedPairs: number;
  samples: number;
  judgmentsPerPair: number;
  judgmentsNeeded: number;
  /** Regular pairs one rater can judge at most: the per-rater cap, or fewer when the batch (or its samples) has fewer. */
  perRater: number;
  /** The fewest raters (who each go on to their cap) with whom every regular pair can reach K; 0 without pairs. */
  ratersNeeded: number;
  /**
   * Comparisons a rater who goes on to their cap is shown: the onboarding pairs, `perRater` regular pairs and the
   * attention checks due among them (at most the check pairs there are). What a full session's time is counted over.
   */
  sessionComparisons: number;
  problems: CapacityProblem[];
};

/**
 * The fewest raters able to give every unit its demand when each rater gives at most one judgment per unit and at
 * most `perRater` in all. By the Gale–Ryser theorem a 0-1 rater × unit table with column sums `demands` and row
 * sums at most c exists for R rows iff, for every k, the k largest demands sum to at most R · min(c, k).
 */
export function fewestRaters(demands: number[], perRater: number): number {
  const sorted = [...demands].sort((a, b) => b - a);
  let prefix = 0;
  let needed = 0;
  sorted.forEach((d, i) => {
    prefix += d;
    needed = Math.max(needed, Math.ceil(prefix / Math.min(perRater, i + 1)));
  });
  return needed;
}

export function computeCapacity(input: CapacityInput): CapacityResult {
  const k = input.judgmentsPerPair;
  const perSample = new Map<string, number>();
  for (const key of input.pairSamples) perSample.set(key, (perSample.get(key) ?? 0) + 1);
  const pairs = input.pairSamples.length;
  const samples = perSample.size;
  // Without allowSameSample a rater gets at most one pair of each sample, so a sample with m pairs needs m·K distinct
  // raters and a rater can do at most one pair per sample. With it, only "no pair twice" holds.
  const demands = input.allowSameSample ? input.pairSamples.map(() => k) : [...perSample.values()].map((m) => m * k);
  const perRater = Math.min(input.perRaterCap, input.allowSameSample ? pairs : samples);
  const ratersNeeded = pairs === 0 ? 0 : fewestRaters(demands, perRater);
  const maxPairsPerSample = Math.max(0, ...perSample.values());
  const problems: CapacityProblem[] = [];

  const stoppedPairs = input.stoppedPairs ?? 0;
  if (pairs === 0 && stoppedPairs === 0) {
    problems.push({ level: 'error', message: 'The batch has no regular pairs, so there is nothing to judge.', numbers: { pairs: 0 } });
  }
  if (pairs > 0 && input.plannedRaters !== null && input.plannedRaters < ratersNeeded) {
    const bySample = !input.allowSameSample && maxPairsPerSample * k === ratersNeeded && maxPairsPerSample > 1;
    problems.push({
      level: 'error',
      message:
        `Not every pair can reach ${k} judgments: ${pairs} pairs × ${k} = ${pairs * k} judgments need at least ${ratersNeeded} raters ` +
        `(each judges at most ${perRater} pairs${input.allowSameSample ? '' : ', one per scenario sample'}` +
        `${bySample ? `; a scenario sample with ${maxPairsPerSample} pairs needs ${maxPairsPerSample * k} different raters` : ''}), ` +
        `but plannedRaters is ${input.plannedRaters}. Raise plannedRaters${perRater < input.perRaterCap ? '' : ' or perRaterCap'}` +
        `${input.allowSameSample ? '' : ', allow the same sample'} or lower judgmentsPerPair.`,
      numbers: { pairs, judgmentsPerPair: k, judgmentsNeeded: pairs * k, perRater, ratersNeeded, plannedRaters: input.plannedRaters },
    });
  }
  const g = input.gold;
  if (g.onboardingPairs < g.onboardingWanted) {
    problems.push({
      level: 'warning',
      message: `Onboarding asks for ${g.onboardingWanted} pairs but only ${g.onboardingPairs} could be made from the runs' completed dialogues.`,
      numbers: { onboardingWanted: g.onboardingWanted, onboardingPairs: g.onboardingPairs },
    });
  }
  const due = g.attentionRate !== null && g.attentionRate > 0 && perRater > 0 ? Math.ceil((perRater * g.attentionRate) / (1 - g.attentionRate)) : 0;
  if (due > g.attentionPairs) {
    problems.push({
      level: 'warning',
      message: `A rater who judges ${perRater} pairs is due about ${due} attention checks, but the batch has ${g.attentionPairs} check pairs and a rater meets each once: they get at most ${g.attentionPairs}.`,
      numbers: { perRater, attentionChecksDue: due, attentionPairs: g.attentionPairs },
    });
  }
  if (g.fromRatedSamples > 0) {
    problems.push({
      level: 'warning',
      message:
        `${g.fromRatedSamples} gold pair${g.fromRatedSamples === 1 ? ' is' : 's are'} made from scenario samples that are also rated (the runs have too few held-out samples): ` +
        'a rater may meet a dialogue in a practice or check pair and later judge it in its regular pair.',
      numbers: { goldFromRatedSamples: g.fromRatedSamples },
    });
  }
  const sessionComparisons = g.onboardingPairs + perRater + Math.min(due, g.attentionPairs);
  return { ok: !problems.some((p) => p.level === 'error'), pairs, stoppedPairs, samples, judgmentsPerPair: k, judgmentsNeeded: pairs * k, perRater, ratersNeeded, sessionComparisons, problems };
}

/** One line per problem, for the CLI and BatchError messages. */
export function describeCapacity(result: CapacityResult): string {
  const needs =
    result.pairs > 0
      ? `Capacity: ${result.pairs} pairs × ${result.judgmentsPerPair} = ${result.judgmentsNeeded} judgments need at least ${result.ratersNeeded} raters (each judges at most ${result.perRater}).`
      : 'Capacity: no regular pairs.';
  return [needs, ...result.problems.map((p) => `${p.level}: ${p.message}`)].join('\n');
}
