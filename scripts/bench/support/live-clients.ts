// Participants for the live-relay benchmark (scripts/bench/live-relay.ts): each has an event stream (reopened with
// Last-Event-ID when it ends, as EventSource does) and sends turns as the page does (a key per turn, sent again with the
// same key until an answer comes). A conversation alternates its two participants' turns, each sent a think time after
// the partner's arrived, and records each turn's delivery latency: from just before its POST to its event on the
// partner's stream.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { openSse, type SseStream } from '../../../test/helpers/sse.js';

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A form POST on the keep-alive pool: its status and JSON body, or null when no answer came (a killed server). */
export function post(url: string, fields: Record<string, string>): Promise<{ status: number; location: string | null; body: Record<string, unknown> } | null> {
  return new Promise((resolve) => {
    const body = new URLSearchParams(fields).toString();
    const req = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // A page (an error page) instead of JSON: the status says it.
        }
        resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, body: parsed });
      });
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.end(body);
  });
}

export function get(url: string): Promise<{ status: number; location: string | null; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, text }));
      })
      .on('error', reject);
  });
}

/** Where a server answers now: a restarted server listens on a new port, and every participant follows it. */
export type Origin = { url: string };

export type Participant = {
  /** The stream's URL at the current origin (without Last-Event-ID, which follows the turns received). */
  streamUrl: () => string;
  /** The fields of a turn's POST (and where), for this participant. */
  turn: (idx: number, text: string, key: string) => { url: string; fields: Record<string, string> };
  streams: SseStream[];
  /** The last turn index received (the Last-Event-ID of the next stream). */
  lastIdx: number;
};

export function openStream(p: Participant): SseStream {
  const stream = openSse(p.streamUrl(), p.lastIdx >= 0 ? { lastEventId: String(p.lastIdx) } : {});
  p.streams.push(stream);
  return stream;
}

/** Waits for turn `idx` on the participant's stream, reopening it when it ended; the event's arrival time. */
export async function receive(p: Participant, idx: number, deadline: number): Promise<number | null> {
  for (;;) {
    let stream = p.streams.at(-1) as SseStream;
    if (stream.closed()) {
      await sleep(200);
      stream = openStream(p);
    }
    try {
      const event = await stream.next((d) => d.type === 'turn' && d.idx === idx, 1_000);
      p.lastIdx = Math.max(p.lastIdx, idx);
      return event.at;
    } catch {
      if (performance.now() > deadline) return null;
    }
  }
}

/** Sends a turn until an answer comes (the same key each time); null when none came before the deadline. */
export async function sendTurn(p: Participant, idx: number, text: string, deadline: number): Promise<{ status: number; body: Record<string, unknown> } | null> {
  const key = randomBytes(12).toString('hex');
  for (;;) {
    const { url, fields } = p.turn(idx, text, key);
    const reply = await post(url, fields);
    if (reply && reply.status < 500) return reply;
    if (performance.now() > deadline) return null;
    await sleep(300);
  }
}

export type Conversation = { id: number; players: [Participant, Participant]; idx: number; sent: string[]; failures: string[] };

/** Turns of one conversation until `until` (performance.now()), each delivered before the next; latencies pushed. */
export async function converse(c: Conversation, until: number, thinkMs: number, latencies: number[]): Promise<void> {
  // Conversations run at their own phases, as people's do. Without this first pause every conversation sent a turn at
  // the same instant when a window began, and that one burst (200 turns queued on the pool) was the whole p99.
  await sleep(thinkMs * Math.random());
  while (performance.now() < until) {
    const speaker = c.players[c.idx % 2] as Participant;
    const listener = c.players[(c.idx + 1) % 2] as Participant;
    // Letters only: a run of digits would read as a phone number, which the relay refuses.
    const text = `turn ${c.idx} of conversation ${c.id}: ${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}`;
    const sentAt = performance.now();
    const reply = await sendTurn(speaker, c.idx, text, sentAt + 60_000);
    if (!reply || reply.status !== 200) {
      c.failures.push(`turn ${c.idx}: ${reply ? `${reply.status} ${JSON.stringify(reply.body)}` : 'no answer'}`);
      return;
    }
    c.sent.push(text);
    const arrived = await receive(listener, c.idx, sentAt + 60_000);
    if (arrived === null) {
      c.failures.push(`turn ${c.idx}: never reached the partner`);
      return;
    }
    latencies.push(arrived - sentAt);
    c.idx += 1;
    await sleep(thinkMs * (0.5 + Math.random()));
  }
}

/** How often each turn index reached a participant, over all the streams it opened. */
export function receivedCounts(p: Participant): Map<number, number> {
  const counts = new Map<number, number>();
  for (const stream of p.streams) {
    for (const e of stream.events) {
      const d = e.data as { type?: string; idx?: number };
      if (d.type === 'turn' && typeof d.idx === 'number') counts.set(d.idx, (counts.get(d.idx) ?? 0) + 1);
    }
  }
  return counts;
}
