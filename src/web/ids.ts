import { randomBytes, randomFillSync } from 'node:crypto';

// randomBytes(16) is a native job of its own per call, about 1% of the rater path's CPU under load (issue 12): ids
// are cut from 4 KB drawn from the same CSPRNG at a time, each byte used once (as Node's randomUUID does).
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let used = POOL_SIZE;

/** An unguessable opaque id for anything a browser sees (128 bits, URL-safe). */
export function newPublicId(bytes = 16): string {
  if (bytes > POOL_SIZE) return randomBytes(bytes).toString('base64url');
  if (used + bytes > POOL_SIZE) {
    randomFillSync(pool);
    used = 0;
  }
  const id = pool.toString('base64url', used, used + bytes);
  used += bytes;
  return id;
}
