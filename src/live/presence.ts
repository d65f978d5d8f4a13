// Who of the players has their page open now (issue 52; Deliberate Lab's "presence"): each open page holds an event
// stream (a sink). One person is one participant with one page: a second page of the same player takes over, and the
// first is told and closed. A player with no open page is away since their last page closed, or, after a restart,
// since the server started; nobody is matched while away, and a player away too long has left.

import type { LiveEvent } from './live-events.js';

export type Sink = {
  /** Sends one event; `id` is the turn index a reconnecting page resumes after (the stream's Last-Event-ID). */
  send(event: LiveEvent, id?: number): void;
  close(): void;
};

export function createPresence(startedAtMs: number) {
  const players = new Map<number, { sinks: Set<Sink>; awaySince: number | null }>();

  return {
    /** A page of this player opened its stream; any earlier page of theirs is told and closed. */
    attach(raterId: number, sink: Sink): void {
      const entry = players.get(raterId) ?? { sinks: new Set<Sink>(), awaySince: null };
      for (const old of entry.sinks) {
        old.send({ type: 'elsewhere' });
        old.close();
      }
      entry.sinks = new Set([sink]);
      entry.awaySince = null;
      players.set(raterId, entry);
    },
    /** A page's stream closed (tab closed, network gone, reload): away from now unless another page is open. */
    detach(raterId: number, sink: Sink, nowMs: number): void {
      const entry = players.get(raterId);
      if (!entry || !entry.sinks.delete(sink)) return;
      if (entry.sinks.size === 0) entry.awaySince = nowMs;
    },
    present(raterId: number): boolean {
      return (players.get(raterId)?.sinks.size ?? 0) > 0;
    },
    /**
     * How long this player has had no page open (0 while one is): since their last page closed, else since the later
     * of the server's start and `notBeforeMs` (when they entered the lobby or the dialogue: a page takes a moment to
     * open its stream).
     */
    awayMs(raterId: number, nowMs: number, notBeforeMs: number): number {
      const entry = players.get(raterId);
      if (entry && entry.sinks.size > 0) return 0;
      return Math.max(0, nowMs - (entry?.awaySince ?? Math.max(startedAtMs, notBeforeMs)));
    },
    send(raterId: number, event: LiveEvent, id?: number): void {
      for (const sink of players.get(raterId)?.sinks ?? []) sink.send(event, id);
    },
    /** The player is done: their streams close and they are forgotten. */
    forget(raterId: number): void {
      for (const sink of players.get(raterId)?.sinks ?? []) sink.close();
      players.delete(raterId);
    },
    closeAll(): void {
      for (const entry of players.values()) for (const sink of entry.sinks) sink.close();
      players.clear();
    },
    size(): number {
      return players.size;
    },
  };
}

export type Presence = ReturnType<typeof createPresence>;
