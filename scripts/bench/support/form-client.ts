// A virtual person's browser for load benchmarks: keep-alive HTTP, cookies, redirects, and forms filled from the
// HTML the server returns (action, hidden fields, radio groups, the first submit button), so that a benchmark follows
// whatever flow the server offers instead of hard-coding its URLs.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';

export type Reply = { status: number; location: string | null; body: string; ms: number; headers: http.IncomingHttpHeaders };

export type FormChoice = { action: string; fields: [string, string][]; hasChoice: boolean };

/** One keep-alive agent per load run: one socket per virtual person at most. */
export function createAgent(sockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: sockets, maxFreeSockets: sockets });
}

export type Browser = {
  request: (method: 'GET' | 'POST', url: string, form?: [string, string][], headers?: Record<string, string>) => Promise<Reply>;
};

/** A browser with its own cookie jar, talking to one origin through the shared agent. */
export function createBrowser(origin: string, agent: http.Agent): Browser {
  const cookies = new Map<string, string>();
  const base = new URL(origin);
  return {
    request(method, url, form, headers = {}) {
      const target = new URL(url, origin);
      const body = form ? new URLSearchParams(form).toString() : undefined;
      const sent: Record<string, string> = { ...headers, 'user-agent': 'simarena-bench/1 (Mozilla/5.0)', accept: 'text/html' };
      if (cookies.size > 0) sent.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      if (body !== undefined) {
        sent['content-type'] = 'application/x-www-form-urlencoded';
        sent['content-length'] = String(Buffer.byteLength(body));
      }
      const started = performance.now();
      return new Promise<Reply>((resolve, reject) => {
        const req = http.request(
          { host: base.hostname, port: base.port, method, path: `${target.pathname}${target.search}`, headers: sent, agent },
          (res) => {
            for (const line of res.headers['set-cookie'] ?? []) {
              const [pair] = line.split(';');
              const eq = pair?.indexOf('=') ?? -1;
              if (pair && eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
            }
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                location: typeof res.headers.location === 'string' ? res.headers.location : null,
                // A gzip answer (the stored analysis, to a client that asks for it as browsers do) is read as a browser reads it.
                body: (res.headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks)).toString('utf8'),
                ms: performance.now() - started,
                headers: res.headers,
              }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        if (body !== undefined) req.write(body);
        req.end();
      });
    },
  };
}

/** A browser signed in to the console as this account (through the login form, as a person would). */
export async function consoleBrowser(origin: string, agent: http.Agent, account: { email: string; password: string }): Promise<Browser> {
  const browser = createBrowser(origin, agent);
  const page = await browser.request('GET', '/console/login');
  const form = findForms(page.body)[0];
  if (!form) throw new Error('no login form at /console/login');
  const fields = form.fields.filter(([n]) => n !== 'email' && n !== 'password');
  fields.push(['email', account.email], ['password', account.password]);
  const reply = await browser.request('POST', form.action, fields);
  if (reply.status >= 400) throw new Error(`login failed with ${reply.status}`);
  return browser;
}

const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&#34;|&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>');

function attr(tag: string, name: string): string | null {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i').exec(tag);
  return m ? decode(m[1] ?? m[2] ?? m[3] ?? '') : null;
}

/** Forms a person would submit to go on: POST forms to this origin, not withdrawal or problem reports. */
export function findForms(html: string): FormChoice[] {
  const forms: FormChoice[] = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const open = m[1] ?? '';
    const inner = m[2] ?? '';
    const action = attr(open, 'action');
    if ((attr(open, 'method') ?? 'get').toLowerCase() !== 'post' || !action || /^[a-z]+:/i.test(action)) continue;
    if (/\/(withdraw|report)(\?|$)/.test(action)) continue;
    const fields: [string, string][] = [];
    const radios = new Map<string, string[]>();
    for (const t of inner.matchAll(/<(input|textarea|button)\b([^>]*)>/gi)) {
      const kind = (t[1] ?? '').toLowerCase();
      const tag = t[2] ?? '';
      const name = attr(tag, 'name');
      const type = (attr(tag, 'type') ?? (kind === 'button' ? 'submit' : 'text')).toLowerCase();
      if (!name || /\sdisabled/i.test(tag)) continue;
      if (type === 'radio') radios.set(name, [...(radios.get(name) ?? []), attr(tag, 'value') ?? 'on']);
      else if (type === 'hidden') fields.push([name, attr(tag, 'value') ?? '']);
      else if (type === 'submit') {
        // The first named submit button is the one a person presses to go on (Enter presses it too).
        if (!fields.some(([n]) => n === name)) fields.push([name, attr(tag, 'value') ?? '']);
      } else if (/\srequired/i.test(tag)) fields.push([name, 'bench']);
    }
    for (const [name, values] of radios) fields.push([name, values[Math.floor(Math.random() * values.length)] as string]);
    forms.push({ action, fields, hasChoice: radios.size > 0 });
  }
  return forms;
}

/** Replaces path segments that are ids or tokens by ':id', so requests group by step. */
export function stepName(method: string, url: string): string {
  const path = new URL(url, 'http://x').pathname
    .split('/')
    .map((s) => (s.length >= 16 || /\d/.test(s) ? ':id' : s))
    .join('/');
  return `${method} ${path}`;
}
