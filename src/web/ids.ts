import { randomBytes } from 'node:crypto';

/** An unguessable opaque id for anything a browser sees (128 bits, URL-safe). */
export function newPublicId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}
