import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { fixedHeaders } from '../../src/web/fixed-headers.js';

// fixedHeaders replays, per response, the headers its source middleware set once at start: for helmet the very same
// headers helmet itself sets on a real response, as the rater and console pages use it.

const headersOf = async (middleware: RequestHandler, method: 'get' | 'post' = 'get') => {
  const app = express();
  // As Express does by default: helmet removes it, so the copy must remove it too.
  app.use((_req, res, next) => {
    res.setHeader('X-Powered-By', 'Express');
    next();
  });
  app.use(middleware);
  app.all('/page', (_req, res) => {
    res.send('ok');
  });
  const res = await request(app)[method]('/page').set('Accept', 'text/html').set('Cookie', 'a=b');
  expect(res.status).toBe(200);
  const { date: _date, ...rest } = res.headers as Record<string, string>;
  return rest;
};

describe('fixedHeaders', () => {
  const configurations: Parameters<typeof helmet>[0][] = [
    {},
    { contentSecurityPolicy: { directives: { 'form-action': ["'self'"] } } },
    {
      contentSecurityPolicy: {
        directives: {
          'default-src': ["'self'"],
          'form-action': ["'self'", 'https://workersandbox.mturk.com'],
          'frame-ancestors': ["'self'", 'https://worker.mturk.com'],
          'upgrade-insecure-requests': null,
        },
      },
      frameguard: false,
      referrerPolicy: { policy: 'no-referrer' },
    },
  ];

  it('a response through fixedHeaders(helmet(options)) carries exactly the headers helmet(options) gives it, X-Powered-By removed', async () => {
    for (const options of configurations) {
      for (const method of ['get', 'post'] as const) {
        const direct = await headersOf(helmet(options), method);
        expect(direct['content-security-policy']).toBeDefined();
        expect(direct['x-powered-by']).toBeUndefined();
        expect(await headersOf(fixedHeaders(helmet(options)), method)).toEqual(direct);
      }
    }
  });

  it('refuses at start a middleware whose headers depend on the request or that does not finish at once', () => {
    const readsRequest: RequestHandler = (req, res, next) => {
      res.setHeader('Vary', String(req.headers.accept));
      next();
    };
    expect(() => fixedHeaders(readsRequest)).toThrow(/reads the request \(headers\)/);
    const later: RequestHandler = (_req, res, next) => {
      res.setHeader('X-Later', '1');
      setTimeout(next, 0);
    };
    expect(() => fixedHeaders(later)).toThrow(/did not call next synchronously/);
  });
});
