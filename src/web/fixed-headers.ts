import type { RequestHandler } from 'express';

type HeaderChange = { name: string; value: string | number | readonly string[] | null };

/**
 * The headers a middleware that sets the same static headers on every response (helmet with string-only options) would
 * set, worked out once at start by running it against a recording response, and set by one middleware. helmet runs a
 * chain of a dozen middlewares per response, each calling the next: about a tenth of a rater request's framework time
 * (issue 12). Refuses at start a source whose headers would depend on the request (it does not finish synchronously
 * on a bare GET, or reads the request's headers).
 */
export function fixedHeaders(source: RequestHandler): RequestHandler {
  const changes: HeaderChange[] = [];
  const set = new Map<string, HeaderChange['value']>();
  const request = new Proxy({ method: 'GET', url: '/', headers: {} } as Record<string, unknown>, {
    get(target, key) {
      if (key === 'method' || key === 'url') return target[key];
      throw new Error(`fixedHeaders: the source middleware reads the request (${String(key)}); its headers are not fixed`);
    },
  });
  const response = {
    setHeader(name: string, value: HeaderChange['value']) {
      changes.push({ name, value });
      set.set(name.toLowerCase(), value);
      return response;
    },
    removeHeader(name: string) {
      changes.push({ name, value: null });
      set.delete(name.toLowerCase());
    },
    getHeader(name: string) {
      return set.get(name.toLowerCase()) ?? undefined;
    },
  };
  let finished = false;
  source(request as never, response as never, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error));
    finished = true;
  });
  if (!finished) throw new Error('fixedHeaders: the source middleware did not call next synchronously; its headers are not fixed');
  return (_req, res, next) => {
    for (const { name, value } of changes) {
      if (value === null) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}
