import { createHmac, timingSafeEqual } from 'node:crypto';

// HMAC signatures for tokens that must not depend on cookies (raters inside a provider's frame)
// and for CSRF tokens bound to a session or a rater.

/**
 * Signatures made lately, by secret, purpose and value: a rater's token is verified, and signed again into the links
 * of the page, several times a request (issue 12). A signature is a pure function of its inputs, so a remembered one is
 * the same bytes; the set is dropped whole when it grows past its bound (about 2 MB).
 */
const recentMacs = new Map<string, string>();
const RECENT_MACS_MAX = 10_000;

function mac(secret: string, purpose: string, value: string): string {
  // Long values (entry tokens' payloads) are signed once each: not worth the memory.
  if (value.length > 100) return createHmac('sha256', secret).update(`${purpose}\n${value}`).digest('base64url');
  const key = `${secret}\n${purpose}\n${value}`;
  const known = recentMacs.get(key);
  if (known !== undefined) return known;
  const made = createHmac('sha256', secret).update(`${purpose}\n${value}`).digest('base64url');
  if (recentMacs.size >= RECENT_MACS_MAX) recentMacs.clear();
  recentMacs.set(key, made);
  return made;
}

export function sign(secret: string, purpose: string, value: string): string {
  return `${value}.${mac(secret, purpose, value)}`;
}

/** Returns the signed value, or null when the token was not made by us for this purpose. */
export function verify(secret: string, purpose: string, token: string): string | null {
  const dot = token.lastIndexOf('.');
  if (dot <= 0) return null;
  const value = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1));
  const expected = Buffer.from(mac(secret, purpose, value));
  return given.length === expected.length && timingSafeEqual(given, expected) ? value : null;
}

export function csrfTokenFor(secret: string, binding: string): string {
  return mac(secret, 'csrf', binding);
}

export function isValidCsrfToken(secret: string, binding: string, token: unknown): boolean {
  if (typeof token !== 'string' || token.length === 0) return false;
  const given = Buffer.from(token);
  const expected = Buffer.from(csrfTokenFor(secret, binding));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
