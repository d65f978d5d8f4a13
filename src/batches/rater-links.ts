import type { ProviderKind, ProviderSettings } from './batch.schema.js';

/** Query parameter names each provider sends, unless the batch renames them (Prolific allows renaming). */
export function providerParamNames(provider: ProviderSettings): { participant: string; study: string; session: string; submitTo?: string } {
  if (provider.kind === 'mturk') {
    return { participant: 'workerId', study: 'hitId', session: 'assignmentId', submitTo: 'turkSubmitTo' };
  }
  return {
    participant: provider.params.participant ?? 'PROLIFIC_PID',
    study: provider.params.study ?? 'STUDY_ID',
    session: provider.params.session ?? 'SESSION_ID',
  };
}

export type RaterLinks = {
  provider: ProviderKind;
  /** The entry URL without provider parameters (opens an anonymous session on plain-link batches). */
  entryUrl: string;
  /** What to paste where the provider asks for the study URL. */
  providerUrl: string;
  /** MTurk only: the ExternalQuestion XML for CreateHIT. */
  externalQuestionXml?: string;
};

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Rater links of a batch per provider: Prolific's study URL carries its {{%PROLIFIC_PID%}}-style placeholders under
 * the batch's parameter names; MTurk's ExternalQuestion URL gets assignmentId, hitId, workerId and turkSubmitTo
 * appended by MTurk itself; a plain link is the entry URL.
 */
export function raterLinks(batch: { publicId: string; settings: { provider: ProviderSettings } }, publicUrl: string): RaterLinks {
  const base = publicUrl.replace(/\/+$/, '');
  const entryUrl = `${base}/r/${encodeURIComponent(batch.publicId)}`;
  const provider = batch.settings.provider;
  if (provider.kind === 'prolific') {
    const names = providerParamNames(provider);
    const query = [
      `${encodeURIComponent(names.participant)}={{%PROLIFIC_PID%}}`,
      `${encodeURIComponent(names.study)}={{%STUDY_ID%}}`,
      `${encodeURIComponent(names.session)}={{%SESSION_ID%}}`,
    ].join('&');
    return { provider: 'prolific', entryUrl, providerUrl: `${entryUrl}?${query}` };
  }
  if (provider.kind === 'mturk') {
    const externalQuestionXml = [
      '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd">',
      `  <ExternalURL>${escapeXml(entryUrl)}</ExternalURL>`,
      '  <FrameHeight>0</FrameHeight>',
      '</ExternalQuestion>',
    ].join('\n');
    return { provider: 'mturk', entryUrl, providerUrl: entryUrl, externalQuestionXml };
  }
  return { provider: 'link', entryUrl, providerUrl: entryUrl };
}
