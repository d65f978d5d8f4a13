import { expect } from 'vitest';

/** The error `promise` rejects with, checked to be a `kind` (a promise that resolves fails the check). */
export async function rejectionOf<E extends Error>(promise: Promise<unknown>, kind: new (...args: never[]) => E): Promise<E> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(kind);
  return error as E;
}
