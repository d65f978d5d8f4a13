import type { BatchSettings } from './batch.schema.js';
import { parsePay } from './pay.js';

// A Prolific batch's money in Prolific's terms: its currency, its reward and its screen-out payment in minor units.
// The launch checklist (batches/) and the Prolific workflows (recruiting/) hold a batch to the same rules.

export type ProlificCurrency = 'GBP' | 'USD';

/** Prolific pays in pounds or dollars (a workspace's currency). */
const PROLIFIC_CURRENCIES: Record<string, ProlificCurrency> = { '£': 'GBP', GBP: 'GBP', gbp: 'GBP', $: 'USD', USD: 'USD', usd: 'USD' };

/** The batch's pay in Prolific's terms: the currency and the reward in minor units (pence, cents); null when unusable. */
export function prolificReward(pay: string): { currency: ProlificCurrency; rewardMinor: number } | null {
  const parsed = parsePay(pay);
  if (!parsed || parsed.amount <= 0) return null;
  const currency = PROLIFIC_CURRENCIES[parsed.currency];
  return currency ? { currency, rewardMinor: Math.round(parsed.amount * 100) } : null;
}

/** A decimal amount in major units ("0.50") in minor units (50). */
export function minorOf(amount: string): number {
  return Math.round(Number(amount) * 100);
}

/** Minor units as the decimal major-unit text Prolific's bonus lines take ("0.50"). */
export function majorText(minor: number): string {
  return (minor / 100).toFixed(2);
}

export function formatMinor(minor: number, currency: string): string {
  return `${majorText(minor)} ${currency}`;
}

/**
 * Prolific's least fixed screen-out payment, in pence / cents: "The minimum pay for a screen-out is $0.14 / £0.10"
 * (Prolific Team, "Update to in-study screening rewards", r/ProlificAc, July 2025).
 */
export const MIN_SCREEN_OUT_MINOR = { GBP: 10, USD: 14 } as const;

/**
 * Why Prolific would refuse the batch's paid screen-out, or null: the fixed screen-out reward must be below the study's
 * reward (PsyNet's Prolific recruiter checks it before deploying: "Prolific requires the fixed screen-out reward to be
 * less than the study reward") and at least Prolific's minimum.
 */
export function screenOutPayProblem(screenOutPay: string | undefined, reward: { currency: ProlificCurrency; rewardMinor: number }): string | null {
  if (screenOutPay === undefined) return null;
  const minor = minorOf(screenOutPay);
  const pay = formatMinor(minor, reward.currency);
  if (minor >= reward.rewardMinor) return `its screen-out payment (provider.screenOutPay, ${pay}) must be below the study's reward (${formatMinor(reward.rewardMinor, reward.currency)}): Prolific refuses a study otherwise.`;
  const least = MIN_SCREEN_OUT_MINOR[reward.currency];
  if (minor < least) return `its screen-out payment (provider.screenOutPay, ${pay}) is below Prolific's minimum of ${formatMinor(least, reward.currency)}.`;
  return null;
}

/** Whether the batch screens raters out: onboarding pairs or attention checks, either of which ends a session early. */
export function batchScreens(settings: Pick<BatchSettings, 'onboarding' | 'attentionChecks'>): boolean {
  return settings.onboarding !== null || settings.attentionChecks !== null;
}

/**
 * Why a Prolific batch's screen-outs would go unpaid, or null. Prolific tells participants that those screened out are
 * paid for their time: its in-study screening pays a fixed screen-out reward for the time spent before the screen-out
 * ("New custom screening", Prolific, July 2025: a FIXED_SCREEN_OUT_PAYMENT action on the screen-out completion code).
 * A batch whose onboarding or attention checks screen raters out must therefore set `provider.screenOutPay`, below the
 * study's reward; without it they would be asked to return the study for nothing.
 */
export function screeningPayProblem(settings: Pick<BatchSettings, 'pay' | 'provider' | 'onboarding' | 'attentionChecks'>): string | null {
  if (settings.provider.kind !== 'prolific' || !batchScreens(settings)) return null;
  const screens = [settings.onboarding ? 'onboarding pairs' : null, settings.attentionChecks ? 'attention checks' : null].filter(Boolean).join(' and ');
  if (settings.provider.screenOutPay === undefined) {
    return `This batch screens raters out (${screens}) but sets no screen-out payment: Prolific tells participants that screened-out ones are paid for their time, so set provider.screenOutPay (a fixed amount below the reward, paid by Prolific's screen-out code).`;
  }
  const reward = prolificReward(settings.pay);
  return reward ? screenOutPayProblem(settings.provider.screenOutPay, reward) : null;
}
