import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import pino, { type Logger } from 'pino';
import { pinoHttp } from 'pino-http';

export function createLogger(level: string): Logger {
  return pino({ level, redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'] });
}

/**
 * A URL as the access log may keep it (issue 10): rater routes lose their query string (participant ids, rater,
 * entry and preview tokens travel there) and the assignment token in their path; other routes lose the values of
 * query parameters that carry a token.
 */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const query = at === -1 ? '' : url.slice(at + 1);
  if (/^\/r(\/|$)/.test(path)) {
    const safePath = path.replace(/^(\/r\/[^/]+\/c\/)[^/]+/, '$1:assignment');
    return query ? `${safePath}?[redacted]` : safePath;
  }
  if (!query) return path;
  const kept = query
    .split('&')
    .map((part) => {
      const name = part.split('=')[0] ?? '';
      return /^(rt|et|pt|token|PROLIFIC_PID|STUDY_ID|SESSION_ID|workerId|assignmentId|hitId)$/i.test(decodeURIComponentSafe(name)) ? `${name}=[redacted]` : part;
    })
    .join('&');
  return `${path}?${kept}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** What pino's standard request serializer hands a custom one: its own fields, and the request as `raw`. */
type SerializedRequest = { id?: unknown; method?: string; url?: string; remoteAddress?: string; raw: IncomingMessage & { originalUrl?: string } };

/**
 * The access log: method, redacted URL, status (and redacted redirect target) and timing, with the user agent and
 * (redacted) referrer; never the parsed query or route parameters, which would repeat what the URL redaction removed.
 * Its lines are info lines: with the log level above info there is no access log, and requests only get the logger for
 * errors (whose lines name the redacted URL themselves). pino-http would otherwise still serialize every request into a
 * child logger that writes nothing, about 7% of the rater path's CPU in the benchmark (issue 12).
 */
export function createHttpLogger(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) {
    return (req, _res, next) => {
      req.log = logger;
      next();
    };
  }
  return pinoHttp({
    logger,
    autoLogging: { ignore: (req) => req.url === '/healthz' },
    serializers: {
      req: (req: SerializedRequest) => {
        const headers = req.raw.headers;
        return {
          id: req.id,
          method: req.method,
          url: redactUrl(req.raw.originalUrl ?? req.url ?? ''),
          headers: {
            'user-agent': headers['user-agent'],
            referer: typeof headers.referer === 'string' ? redactUrl(headers.referer.replace(/^https?:\/\/[^/]+/, '')) : undefined,
          },
          remoteAddress: req.remoteAddress,
        };
      },
      // A redirect's Location carries the rater token of the next page: kept only in redacted form.
      res: (res: { statusCode?: number; headers?: Record<string, unknown> }) => {
        const location = res.headers?.location;
        return { statusCode: res.statusCode, ...(typeof location === 'string' ? { headers: { location: redactUrl(location) } } : {}) };
      },
    },
  });
}
