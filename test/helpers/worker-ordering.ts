// Shows that a request handed to the analysis worker leaves the server's event loop free: while the worker computes
// for it, GET /healthz is answered first (an ordering, not a timing). Issue 12: analysis never runs on the request thread.
import type { Express } from 'express';
import request from 'supertest';
import { expect } from 'vitest';

/**
 * Starts `slow` (a request whose answer waits for the worker), waits (bounded) until `working()` says the worker has
 * it, asks for /healthz, and checks /healthz was answered before `slow`; returns `slow`'s reply.
 */
export async function answeredWhileWorkerComputes<T>(app: Express, working: () => boolean, slow: PromiseLike<T>): Promise<T> {
  const order: string[] = [];
  const slowReply = Promise.resolve(slow).then((reply) => {
    order.push('slow');
    return reply;
  });
  for (let i = 0; i < 600 && !working(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(working()).toBe(true);
  const health = await request(app).get('/healthz');
  order.push('healthz');
  expect(health.status).toBe(200);
  const reply = await slowReply;
  expect(order).toEqual(['healthz', 'slow']);
  return reply;
}
