import { sign, verify } from '../web/signing.js';

// Rater state travels in URLs and forms as signed tokens, never in cookies: MTurk frames the pages and browsers
// block third-party cookies there (issue 4, "Inside a provider's frame").

export function raterToken(secret: string, raterPublicId: string): string {
  return sign(secret, 'rater', raterPublicId);
}

/** The rater's public id, or null for a forged or foreign token. */
export function raterIdFromToken(secret: string, token: unknown): string | null {
  return typeof token === 'string' && token.length <= 300 ? verify(secret, 'rater', token) : null;
}

/** A token the console puts in a batch's preview link: shows the rater pages of that batch, records nothing. */
export function previewToken(secret: string, batchPublicId: string): string {
  return sign(secret, 'batch-preview', batchPublicId);
}

export function isPreviewToken(secret: string, batchPublicId: string, token: unknown): boolean {
  return typeof token === 'string' && token.length <= 300 && verify(secret, 'batch-preview', token) === batchPublicId;
}

/** The full preview URL of a batch, for the console. */
export function previewUrl(publicUrl: string, secret: string, batchPublicId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/r/${encodeURIComponent(batchPublicId)}/preview?pt=${encodeURIComponent(previewToken(secret, batchPublicId))}`;
}
