import { openSse, type SseStream } from '../helpers/sse.js';

// A participant of a role-play batch over HTTP, as a browser without JavaScript's help would be: the entry link, the
// consent and instruction forms, the page's event stream, and turns sent as the page's script sends them.

export function hidden(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!match?.[1]) throw new Error(`no hidden ${name} in:\n${html.slice(0, 2000)}`);
  return match[1].replace(/&amp;/g, '&').replace(/&#34;/g, '"');
}

async function form(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
}

export type Participant = {
  rt: string;
  csrf: string;
  /** The player's page URL (…/live?rt=…). */
  playUrl: string;
  page: () => Promise<string>;
  events: (lastEventId?: string) => SseStream;
  turn: (fields: { key: string; action?: string; text?: string; signals?: string }) => Promise<{ status: number; body: Record<string, unknown> }>;
  post: (path: string, fields: Record<string, string>) => Promise<Response>;
};

/** Enters a role-play batch from its link (plus `query`), consents and reads the instructions: the player is in the lobby. */
export async function enter(base: string, publicId: string, query = ''): Promise<Participant> {
  const entry = await fetch(`${base}/r/${publicId}${query}`);
  const consent = await entry.text();
  if (entry.status !== 200) throw new Error(`entry answered ${entry.status}: ${consent.slice(0, 500)}`);
  const agreed = await form(`${base}/r/${publicId}/live/consent`, { et: hidden(consent, 'et'), _csrf: hidden(consent, '_csrf'), decision: 'agree' });
  const instructionsUrl = `${base}${agreed.headers.get('location') ?? ''}`;
  const instructions = await (await fetch(instructionsUrl)).text();
  const rt = hidden(instructions, 'rt');
  const csrf = hidden(instructions, '_csrf');
  const ready = await form(`${base}/r/${publicId}/live/instructions`, { rt, _csrf: csrf });
  const playUrl = `${base}${ready.headers.get('location') ?? ''}`;
  return {
    rt,
    csrf,
    playUrl,
    page: async () => (await fetch(playUrl)).text(),
    events: (lastEventId) => openSse(`${base}/r/${publicId}/live/events?rt=${encodeURIComponent(rt)}&after=-1`, { lastEventId }),
    async turn(fields) {
      const res = await form(`${base}/r/${publicId}/live/turn`, { rt, _csrf: csrf, action: 'speak', text: '', ...fields });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    post: (path, fields) => form(`${base}/r/${publicId}/live/${path}`, { rt, _csrf: csrf, ...fields }),
  };
}
