import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

// A small client of server-sent events (the WHATWG EventSource's stream format: `id:`, `data:`, `retry:`, comment
// lines, a blank line ends an event) for tests and the benchmark: it records each event with the time it arrived.

export type SseEvent = { id: string | undefined; data: unknown; at: number };

export type SseStream = {
  events: SseEvent[];
  status: () => number | null;
  headers: () => Record<string, string | string[] | undefined>;
  /** Resolves with the first event (from now on, or already received when `fromStart`) that `match` accepts. */
  next: (match: (data: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<SseEvent>;
  close: () => void;
  closed: () => boolean;
};

export function openSse(url: string, options: { lastEventId?: string; ca?: string | Buffer } = {}): SseStream {
  const events: SseEvent[] = [];
  const waiters: { match: (d: Record<string, unknown>) => boolean; resolve: (e: SseEvent) => void }[] = [];
  let status: number | null = null;
  let headers: Record<string, string | string[] | undefined> = {};
  let ended = false;
  const target = new URL(url);
  const make = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const req = make(target, { headers: { Accept: 'text/event-stream', ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}) }, ca: options.ca, agent: false }, (res) => {
    status = res.statusCode ?? null;
    headers = res.headers;
    res.setEncoding('utf8');
    let buffer = '';
    let id: string | undefined;
    let data: string[] = [];
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (data.length > 0) {
            const text = data.join('\n');
            let parsed: unknown;
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
            const event = { id, data: parsed, at: performance.now() };
            events.push(event);
            for (const w of [...waiters]) {
              if (typeof parsed === 'object' && parsed !== null && w.match(parsed as Record<string, unknown>)) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(event);
              }
            }
          }
          id = undefined;
          data = [];
        } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        else if (line.startsWith('id:')) id = line.slice(3).trim();
        newline = buffer.indexOf('\n');
      }
    });
    res.on('end', () => void (ended = true));
    res.on('error', () => void (ended = true));
  });
  req.on('error', () => void (ended = true));
  req.end();
  return {
    events,
    status: () => status,
    headers: () => headers,
    next(match, timeoutMs = 10_000) {
      const seen = events.find((e) => typeof e.data === 'object' && e.data !== null && match(e.data as Record<string, unknown>));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.data))}`)), timeoutMs);
        waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    close: () => req.destroy(),
    closed: () => ended,
  };
}
