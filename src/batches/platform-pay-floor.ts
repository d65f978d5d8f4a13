import type { ProviderKind } from './batch.schema.js';

// The least pay per hour each platform allows (issue 49). The launch checklist refuses to open a Prolific or MTurk
// batch paying less per hour for the time it promises, which is never below the least time a session takes.
// - Prolific: "the minimum pay allowed is £6.00 / $8.00 per hour", and it recommends "at least £9.00 / $12.00 per
//   hour" (Prolific's payment principles, https://researcher-help.prolific.com/hc/en-gb/articles/4407695146002);
//   it pays in GBP or USD only, and judges the rate at the median completion time once participants have finished.
// - MTurk publishes no hourly minimum (only a reward of at least $0.01 an assignment). Fair-pay guidance for MTurk
//   research asks for at least the US federal minimum wage, $7.25 an hour (the WeAreDynamo "Guidelines for Academic
//   Requesters", guidelines.wearedynamo.org; Kummerfeld 2021, "Quantifying and Avoiding Unfair Qualification Labour
//   in Crowdsourcing", ACL), which simarena holds MTurk batches to.

export type PayFloor = { minimum: number; recommended: number | null; currency: string; source: string };

const FLOORS: Record<Exclude<ProviderKind, 'link'>, Record<string, Omit<PayFloor, 'currency'>>> = {
  prolific: {
    GBP: { minimum: 6, recommended: 9, source: "Prolific's minimum" },
    USD: { minimum: 8, recommended: 12, source: "Prolific's minimum" },
  },
  mturk: {
    USD: { minimum: 7.25, recommended: null, source: 'the US federal minimum wage (MTurk publishes no hourly minimum)' },
  },
};

/** A pay's currency as an ISO code: "£" and "GBP" → GBP, "$" and "USD" → USD; anything else as written. */
export function currencyCode(currency: string): string {
  const c = currency.trim().toUpperCase();
  return c === '£' ? 'GBP' : c === '$' ? 'USD' : c;
}

/** The platform's floor in the pay's currency, or null for a plain link or a currency the platform does not pay in. */
export function platformPayFloor(kind: ProviderKind, currency: string): PayFloor | null {
  if (kind === 'link') return null;
  const code = currencyCode(currency);
  const floor = FLOORS[kind][code];
  return floor ? { ...floor, currency } : null;
}

/** The currencies a platform pays in, for the message when a pay is in another. */
export function platformCurrencies(kind: Exclude<ProviderKind, 'link'>): string[] {
  return Object.keys(FLOORS[kind]);
}
