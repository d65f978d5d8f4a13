import { hidden } from './live-http.js';

// A writer of a writing batch over HTTP, as the page's script talks to the server: the entry link, the consent and
// instruction forms, saves of the draft and the hand-in.

/** Which page a save comes from (public/js/write.js): its name, and the stored version it started from or last saved. */
export type PageName = { tab?: string; base?: number };

export type DraftTurn = { speaker: 1 | 2; action: string; text: string; keys?: number; typing_ms?: number; pastes?: number };

async function form(url: string, fields: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
}

/** Eight turns, character 1 first, taking turns. */
export function eightTurns(prefix = 'Line'): DraftTurn[] {
  return Array.from({ length: 8 }, (_, i) => ({ speaker: (i % 2 === 0 ? 1 : 2) as 1 | 2, action: 'speak', text: `${prefix} ${i + 1} of the talk.`, keys: 20 + i, typing_ms: 4000 + i, pastes: i === 3 ? 1 : 0 }));
}

export async function enterWriter(base: string, publicId: string) {
  const entry = await fetch(`${base}/r/${publicId}`);
  const consent = await entry.text();
  if (entry.status !== 200) throw new Error(`entry answered ${entry.status}: ${consent.slice(0, 500)}`);
  const agreed = await form(`${base}/r/${publicId}/write/consent`, { et: hidden(consent, 'et'), _csrf: hidden(consent, '_csrf'), decision: 'agree' });
  const instructions = await (await fetch(`${base}${agreed.headers.get('location') ?? ''}`)).text();
  const rt = hidden(instructions, 'rt');
  const csrf = hidden(instructions, '_csrf');
  const ready = await form(`${base}/r/${publicId}/write/instructions`, { rt, _csrf: csrf });
  const writeUrl = `${base}${ready.headers.get('location') ?? ''}`;
  return {
    rt,
    csrf,
    writeUrl,
    consent,
    page: async () => (await fetch(writeUrl)).text(),
    /** A save as a page sends it; `from` names the page and the stored version it knows (a page before migration 076 sends neither). */
    async save(version: number, turns: DraftTurn[], fields: Record<string, string> = {}, from: PageName = {}) {
      const res = await form(`${base}/r/${publicId}/write/draft`, { rt, _csrf: csrf, draft: JSON.stringify({ version, ...from, turns }), ...fields });
      const text = await res.text();
      return { status: res.status, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : { page: text }) as Record<string, unknown> };
    },
    submit: (version: number, turns: DraftTurn[], from: PageName = {}) => form(`${base}/r/${publicId}/write/submit`, { rt, _csrf: csrf, draft: JSON.stringify({ version, ...from, turns }) }),
  };
}
