import { createHmac } from 'node:crypto';

/**
 * The exported `judge`: the first 16 hex digits of HMAC-SHA256(batch judge salt, rater identity). The same person
 * (provider + participant id) gets the same pseudonym throughout a batch, and an unrelated one in every other batch,
 * so exports of two batches cannot be joined on raters. A rater without a participant id is identified by its row.
 */
export function judgePseudonym(judgeSalt: string, rater: { provider: string; participantId: string | null; raterPublicId: string }): string {
  const identity = rater.participantId ? `${rater.provider}:${rater.participantId}` : `rater:${rater.raterPublicId}`;
  return createHmac('sha256', judgeSalt).update(identity).digest('hex').slice(0, 16);
}
