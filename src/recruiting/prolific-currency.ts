import { formatMinor } from '../batches/prolific-pay.js';
import type { Config } from '../config.js';
import { RecruitingError } from './platform-deps.js';
import type { ProlificClient } from './prolific-client.js';
import type { ProlificStudy } from './prolific.schema.js';

// Prolific pays in its workspace's currency: a study's reward is "in cents (according to the currency of your
// account)" (docs.prolific.com, the study object), so a batch whose pay is in dollars, published from a workspace in
// pounds, would pay its amounts in pounds. The workspace's currency is read before a study is created ("Get the
// balance of a workspace", currency_code: "the currency used for all financial transactions within the workspace"),
// and the study's own currency_code after, before it is published and before any bonus is paid: a study may land in
// another workspace than the one checked (Prolific creates it in the token's default one).

/** The study's currency as Prolific's CLI reads it (model/study.go, GetCurrencyCode: GBP when it names none). */
export function studyCurrency(study: Pick<ProlificStudy, 'currency_code'>): string {
  return study.currency_code || 'GBP';
}

/** The workspace whose currency is checked: PROLIFIC_WORKSPACE_ID, or the token's workspaces when they all agree. */
async function workspaceCurrencies(client: ProlificClient, config: Config): Promise<{ id: string; title: string; currency: string | null }[]> {
  const workspaces = config.prolificWorkspaceId ? [{ id: config.prolificWorkspaceId, title: config.prolificWorkspaceId }] : await client.listWorkspaces();
  return Promise.all(workspaces.map(async (w) => ({ id: w.id, title: w.title ?? w.id, currency: await client.workspaceCurrency(w.id) })));
}

/**
 * Refuses, before anything is created, a batch whose currency is not its Prolific workspace's, naming both. With
 * several workspaces and no PROLIFIC_WORKSPACE_ID, each must pay in the batch's currency.
 */
export async function requireWorkspaceCurrency(client: ProlificClient, config: Config, batchId: number, batchCurrency: string): Promise<void> {
  const other = (await workspaceCurrencies(client, config)).filter((w) => w.currency !== batchCurrency);
  const first = other[0];
  if (!first) return;
  const which = other.map((w) => `"${w.title}" (${w.id}) pays in ${w.currency ?? 'an unknown currency'}`).join('; ');
  throw new RecruitingError(
    `Batch ${batchId} pays in ${batchCurrency}, but the Prolific workspace ${which}: Prolific would pay the batch's amounts in that currency. ` +
      `Nothing was created. Set the batch's "pay" in the workspace's currency, or use a workspace in ${batchCurrency}${config.prolificWorkspaceId ? ' (PROLIFIC_WORKSPACE_ID)' : ' (set PROLIFIC_WORKSPACE_ID to it)'}.`,
    409,
  );
}

/**
 * Refuses to publish or pay a study whose currency is not the batch's, naming both (and, before publishing, one whose
 * reward is not the batch's pay); the study is left as it is: a draft stays unpublished, nothing is paid.
 */
export function requireStudyTerms(
  study: Pick<ProlificStudy, 'id' | 'status' | 'currency_code' | 'reward'>,
  batch: { id: number; currency: string; rewardMinor?: number },
  doing: 'publish' | 'pay bonuses',
): void {
  const currency = studyCurrency(study);
  const draft = study.status === 'UNPUBLISHED';
  const where = draft ? 'It is left as a draft on Prolific, unpublished, and nothing is paid.' : `It is ${study.status} on Prolific; nothing more is paid by simarena.`;
  const reward = typeof study.reward === 'number' ? formatMinor(study.reward, currency) : null;
  if (currency !== batch.currency) {
    throw new RecruitingError(
      `Batch ${batch.id} pays in ${batch.currency}, but its Prolific study ${study.id} pays in ${currency} (its workspace's currency), so simarena will not ${doing}. ${where} ` +
        `Set the batch's "pay" in ${currency}${reward ? ` (${reward}, the study's reward)` : ''} to go on with this study, or delete it on Prolific and clone the batch to publish it from a workspace in ${batch.currency}.`,
      409,
    );
  }
  if (batch.rewardMinor !== undefined && typeof study.reward === 'number' && study.reward !== batch.rewardMinor) {
    throw new RecruitingError(
      `Batch ${batch.id} pays ${formatMinor(batch.rewardMinor, currency)}, but its Prolific study ${study.id} was created with a reward of ${reward}, so simarena will not publish it. ${where} Set the batch's "pay" back, or change the draft's reward on Prolific.`,
      409,
    );
  }
}
