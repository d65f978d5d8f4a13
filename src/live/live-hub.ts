import { humansOf, playerOf, roleplayBatch } from './live-dialogue.js';
import { extendDeadline, listActiveDialogues } from './live.queries.js';
import { tickLobby } from './lobby.js';
import { answerQuestions, attachPage, detachPage, joinLobby, reportPartner, takeTurn, withdrawPlayer } from './player-actions.js';
import { createPresence, type Sink } from './presence.js';
import { missTurn, type RelayContext, type RelayDeps, scheduleAgent, storeAgentTurn, endNow, type TurnRequest } from './relay.js';

// The live part of the server in one object: what the routes call, and the clock that moves things on. One per app
// (no module state); the server starts its timer and stops it at shutdown.

/** How often the clocks are looked at: turn deadlines, waits and absences are seconds long, so a fifth of one is enough. */
export const TICK_MS = 200;

/** The dialogues' clocks: players away too long have left, a turn not taken passes, the agent's turn is asked for or shown. */
function tickDialogues(ctx: RelayContext): void {
  const nowMs = ctx.deps.clock().getTime();
  for (const live of listActiveDialogues(ctx.deps.db)) {
    const rb = roleplayBatch(ctx.deps.db, live.batch_id);
    if (!rb) continue;
    const gone = humansOf(live).find((raterId) => ctx.presence.awayMs(raterId, nowMs, Date.parse(live.started_at)) > rb.roleplay.partner.awaySeconds * 1000);
    if (gone !== undefined) {
      endNow(ctx, live, rb.roleplay, 'away', gone);
      continue;
    }
    const agentsTurn = playerOf(live, live.next_speaker) === null;
    const ready = ctx.pending.get(live.dialogue_id)?.ready;
    if (agentsTurn && ready && ready.showAt <= nowMs) storeAgentTurn(ctx, live, rb.roleplay);
    else if (Date.parse(live.turn_deadline_at) <= nowMs) missTurn(ctx, live, rb.roleplay);
    else if (agentsTurn) scheduleAgent(ctx, live, rb.roleplay);
  }
}

/**
 * After a restart: every turn under way gets a whole turn's time again from now (its players' pages reconnect, and
 * the time the server was down is not theirs to lose); absences count from the start.
 */
function resume(ctx: RelayContext): void {
  const now = ctx.deps.clock();
  for (const live of listActiveDialogues(ctx.deps.db)) {
    const rb = roleplayBatch(ctx.deps.db, live.batch_id);
    if (rb) extendDeadline(ctx.deps.db, live.dialogue_id, new Date(now.getTime() + rb.roleplay.turns.turnSeconds * 1000));
  }
}

export function createLiveHub(deps: RelayDeps) {
  const ctx: RelayContext = { deps, presence: createPresence(deps.clock().getTime()), pending: new Map(), inFlight: new Set(), names: new Map(), stopped: false };
  resume(ctx);
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    if (ctx.stopped) return;
    try {
      tickLobby(ctx);
      tickDialogues(ctx);
    } catch (error) {
      deps.onError?.(error, 'the live clock failed');
    }
  };
  return {
    join: (raterId: number) => joinLobby(ctx, raterId),
    attach: (raterId: number, sink: Sink, afterIdx: number) => attachPage(ctx, raterId, sink, afterIdx),
    detach: (raterId: number, sink: Sink) => detachPage(ctx, raterId, sink),
    takeTurn: (raterId: number, request: TurnRequest) => takeTurn(ctx, raterId, request),
    report: (raterId: number, reason: string | null) => reportPartner(ctx, raterId, reason),
    answer: (raterId: number, answers: { guess: 'person' | 'ai'; goalScore: number }) => answerQuestions(ctx, raterId, answers),
    withdraw: (raterId: number) => withdrawPlayer(ctx, raterId),
    tick,
    /** Runs the clock every TICK_MS until stop(); the timer never keeps the process alive. */
    start(): void {
      timer ??= setInterval(tick, TICK_MS);
      timer.unref();
    },
    /** Resolves when no agent call is under way (tests, and the benchmark's check). */
    async idle(): Promise<void> {
      while (ctx.inFlight.size > 0) await Promise.all([...ctx.inFlight]);
    },
    /** Players with a page open now. */
    connected: () => ctx.presence.size(),
    stop(): void {
      ctx.stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      deps.agent?.stop();
      ctx.presence.closeAll();
    },
  };
}

export type LiveHub = ReturnType<typeof createLiveHub>;
