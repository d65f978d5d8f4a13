import { describe, expect, it } from 'vitest';
import { newPublicId } from '../../src/web/ids.js';

describe('newPublicId', () => {
  it('gives URL-safe ids of the asked length, never the same twice across many refills of its pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newPublicId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // Ids of other sizes cut from the same pool, including ones that straddle its end, are whole and distinct too.
    const mixed = Array.from({ length: 2_000 }, (_, i) => newPublicId(1 + (i % 48)));
    for (const [i, id] of mixed.entries()) expect(Buffer.from(id, 'base64url').length).toBe(1 + (i % 48));
    expect(new Set(mixed.filter((id) => id.length >= 22)).size).toBe(mixed.filter((id) => id.length >= 22).length);
    expect(Buffer.from(newPublicId(10_000), 'base64url').length).toBe(10_000);
  });

  it('spreads its bytes evenly over all 256 values (no byte handed out twice, no zero-filled stretch)', () => {
    const counts = new Array<number>(256).fill(0);
    for (let i = 0; i < 4_000; i++) for (const byte of Buffer.from(newPublicId(), 'base64url')) counts[byte] = (counts[byte] ?? 0) + 1;
    // 64,000 bytes: 250 expected per value; a chi-square over 255 degrees of freedom beyond 350 has p < 1e-4.
    const chiSquare = counts.reduce((sum, n) => sum + (n - 250) ** 2 / 250, 0);
    expect(chiSquare).toBeLessThan(350);
    expect(Math.min(...counts)).toBeGreaterThan(0);
  });
});
