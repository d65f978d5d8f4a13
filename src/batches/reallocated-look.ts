import { alphaSpent, boundAfter, futilityBoundaries, futilityDrift, NO_BOUND_ABOVE } from '../numbers/group-sequential.js';
import { normalCdf } from '../numbers/normal.js';
import { type LookDecision, type LookInput, lookOutcome } from './sequential-rule.js';

// A look at a comparison whose maximum changed since earlier looks (reallocation, issue 44;
// docs/researcher/sequential-batches.md, "Reallocation"). Pure, like sequential-rule.ts. The looks already taken keep
// the bounds they were held to and the alpha they spent; from now on the spending function is read at the information
// fraction over the NEW maximum, and a look spends only what that fraction allows beyond what was spent (Lan & DeMets
// 1983: the spending function may be read at any information, provided the information does not depend on this
// comparison's own data; here it changes because another comparison stopped).

/** A look already taken, as stored: its fraction (over the maximum of its time), that maximum, and its bound. */
export type PastLook = { fraction: number; maxPairs: number; critical: number | null };

/**
 * Each look's information on the scale of the current maximum: fraction x its maximum / the current maximum (decisive
 * pairs over the current maximum; the final look stays 1). With an unchanged maximum these are the stored fractions.
 * The joint law of the looks' statistics depends only on the ratios of these numbers (Jennison & Turnbull 2000, 3.1).
 */
export function informationScale(looks: readonly Pick<PastLook, 'fraction' | 'maxPairs'>[], maxPairs: number): number[] {
  return looks.map((l) => Math.min(1, (l.fraction * l.maxPairs) / maxPairs));
}

/** Whether a comparison's maximum changed since the looks taken: their decisions are then made over the new maximum. */
export function maximumChanged(looks: readonly Pick<PastLook, 'maxPairs'>[], maxPairs: number): boolean {
  return looks.some((l) => l.maxPairs !== maxPairs);
}

/** A look's input (sequential-rule.ts) whose maxPairs is the comparison's pairs now, with those reallocation added. */
export type ReallocatedLookInput = Omit<LookInput, 'earlier' | 'completed'> & { earlier: readonly PastLook[] };

/** One look over the new maximum; null when no look can be taken (no decisive pair, or no information gained). */
export function decideReallocatedLook(input: ReallocatedLookInput): LookDecision | null {
  const decisive = input.winsA + input.winsB;
  if (decisive === 0) return null;
  const scale = informationScale(input.earlier, input.maxPairs);
  const reached = input.final ? 1 : Math.min(1, decisive / input.maxPairs);
  if (!(reached > (scale[scale.length - 1] ?? 0))) return null;
  // Cumulative alpha spent so far: each look spent up to the spending function at its own fraction, never less than before.
  const spentBefore = Math.max(0, ...input.earlier.map((l) => alphaSpent(input.spending, input.alpha, l.fraction)));
  const spend = alphaSpent(input.spending, input.alpha, reached) - spentBefore;
  const bound = boundAfter(
    [...scale, reached],
    input.earlier.map((l) => l.critical ?? Infinity),
    spend,
  );
  const critical = bound > NO_BOUND_ABOVE ? Infinity : bound;
  return lookOutcome(input, reached, critical, 2 * normalCdf(-critical), input.final ? null : futilityAt([...scale, reached], input));
}

/**
 * The futility bound at the newest look, from beta spending over the new maximum (its drift follows the new number of
 * pairs). The efficacy bound above ignores futility stops, earlier ones included, so from a reallocation on futility is
 * non-binding whatever the rule says: type I error holds whether or not the researcher stops.
 */
function futilityAt(fractions: readonly number[], input: ReallocatedLookInput): number | null {
  if (!input.futility) return null;
  const { beta, effect } = input.futility;
  const bounds = futilityBoundaries(fractions, { family: input.spending, alpha: input.alpha, beta, drift: futilityDrift(effect, input.maxPairs), binding: false });
  const f = bounds.futility[fractions.length - 1] ?? 0;
  return f > 0 ? f : null;
}
