import { createHmac, timingSafeEqual } from 'node:crypto';

// HMAC signatures for tokens that must not depend on cookies (raters inside a provider's frame)
// and for CSRF tokens bound to a session or a rater.

function mac(secret: string, purpose: string, value: string): string {
  return createHmac('sha256', secret).update(`${purpose}\n${value}`).digest('base64url');
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
