import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { RoleplaySettings } from '../batches/batch.schema.js';
import { getDialogue } from '../generation/dialogue.queries.js';
import { agentTurnDelayMs } from './agent-pace.js';
import type { AgentPlayer, AgentTurn } from './live-agent.js';
import { endMessage, type LiveEvent } from './live-events.js';
import {
  type EndReason,
  endLiveDialogue,
  humansOf,
  playerOf,
  roleplayBatch,
  storeTurn,
  type TurnInput,
  type TurnOutcome,
} from './live-dialogue.js';
import { countTurns, getLiveDialogue, getPlayer, type LiveDialogueRow, type LiveTurn, listTurnsAfter, setMissedTurns } from './live.queries.js';
import { buildPlayerView, turnsForPlayer } from './player-view.js';
import type { Presence } from './presence.js';

// The relay of live dialogues (issue 52): what its parts share (RelayContext), the events each player's page is sent
// after a change commits, and the turns that are not a player's own act: the agent's (asked for, then shown at its
// moment) and a turn let pass. The lobby is lobby.ts, a player's acts player-actions.ts, the clocks live-hub.ts. The
// database is the truth: every change is a transaction; what is kept here in memory (who has a page open, an agent's
// answer waiting for its moment, the names each page shows) is rebuilt or asked again after a restart. Nothing here
// knows HTTP: a page's stream is a Sink (presence.ts).

export type RelayDeps = {
  db: Db;
  clock: Clock;
  random: () => number;
  /** Null when the server cannot reach any model: a lone participant then gets the "no partner" code. */
  agent: AgentPlayer | null;
  onError?: (error: unknown, what: string) => void;
};

export type TurnRequest = { key: string; action: 'speak' | 'non-verbal' | 'action' | 'leave'; text: string; signals: TurnInput['signals'] };
export type TurnReply = { kind: 'stored' | 'duplicate'; idx: number } | { kind: 'refused'; status: 409 | 422; message: string };

type PendingAgent = { idx: number; ready: { turn: AgentTurn; showAt: number } | null };

/** What the relay's parts share: its dependencies, who has a page open, and the agent's turns under way. */
export type RelayContext = {
  deps: RelayDeps;
  presence: Presence;
  /** Per dialogue, the agent's turn being asked for or waiting for its moment. */
  pending: Map<number, PendingAgent>;
  inFlight: Set<Promise<void>>;
  /** Each player's names of the two characters, per dialogue and character. */
  names: Map<string, [string, string]>;
  stopped: boolean;
};

export function namesFor(ctx: RelayContext, dialogueId: number, character: 1 | 2): [string, string] {
  const key = `${dialogueId}:${character}`;
  const known = ctx.names.get(key);
  if (known) return known;
  const dialogue = getDialogue(ctx.deps.db, dialogueId);
  const view = dialogue ? buildPlayerView(ctx.deps.db, dialogue, character) : null;
  const made: [string, string] = view?.names ?? ['Character 1', 'Character 2'];
  ctx.names.set(key, made);
  return made;
}

/** Sends each human player of the dialogue the event made for their character. */
function toPlayers(ctx: RelayContext, live: LiveDialogueRow, make: (character: 1 | 2) => { event: LiveEvent; id?: number } | null): void {
  for (const character of [1, 2] as const) {
    const raterId = playerOf(live, character);
    const made = raterId === null ? null : make(character);
    if (raterId !== null && made) ctx.presence.send(raterId, made.event, made.id);
  }
}

/** Whose turn it is and until when; `taken`: the turns so far when the caller knows them (else counted). */
export function stateEvent(ctx: RelayContext, live: LiveDialogueRow, roleplay: RoleplaySettings, taken?: number): LiveEvent {
  return {
    type: 'state',
    next: live.next_speaker,
    secondsLeft: Math.max(0, Math.round((Date.parse(live.turn_deadline_at) - ctx.deps.clock().getTime()) / 1000)),
    taken: taken ?? countTurns(ctx.deps.db, live.dialogue_id).turns,
    max: roleplay.turns.max,
  };
}

/** One turn as an event for one character's page, with its index as the event's id. */
function turnEvent(ctx: RelayContext, dialogueId: number, turn: LiveTurn, character: 1 | 2): { event: LiveEvent; id: number } {
  const shownNames = namesFor(ctx, dialogueId, character);
  const [shown] = turnsForPlayer([turn], shownNames);
  // A turn in which nothing was done reads the same whoever let it pass.
  const event: LiveEvent = shown ? { type: 'turn', ...shown } : { type: 'missed', speaker: turn.speaker, name: shownNames[turn.speaker - 1] ?? '' };
  return { event, id: turn.idx };
}

/** The turns after `afterIdx` as events for one character's page, each with its index as the event's id. */
export function turnEvents(ctx: RelayContext, live: Pick<LiveDialogueRow, 'dialogue_id'>, afterIdx: number, character: 1 | 2): { event: LiveEvent; id: number }[] {
  return listTurnsAfter(ctx.deps.db, live.dialogue_id, afterIdx).map((turn) => turnEvent(ctx, live.dialogue_id, turn, character));
}

function publishEnd(ctx: RelayContext, live: LiveDialogueRow): void {
  for (const raterId of humansOf(live)) {
    const outcome = getPlayer(ctx.deps.db, raterId)?.outcome;
    if (outcome) ctx.presence.send(raterId, { type: 'ended', message: endMessage(outcome) });
  }
  for (const character of [1, 2] as const) ctx.names.delete(`${live.dialogue_id}:${character}`);
  ctx.pending.delete(live.dialogue_id);
}

/** After a turn was stored: the turn to both pages, then whose turn it is, or the end. */
export function afterTurn(ctx: RelayContext, dialogueId: number, outcome: TurnOutcome): void {
  // The dialogue as the turn left it, and the turn as stored, come with the outcome: this runs on every turn (the live
  // relay benchmark, docs/contributor/benchmarks.md); the turns taken are its index + 1.
  const live = outcome.after ?? getLiveDialogue(ctx.deps.db, dialogueId);
  const rb = live ? roleplayBatch(ctx.deps.db, live.batch_id) : null;
  if (!live || !rb) return;
  const { turn } = outcome;
  toPlayers(ctx, live, (character) => turnEvent(ctx, dialogueId, turn, character));
  if (outcome.ended) {
    publishEnd(ctx, live);
    return;
  }
  const state = stateEvent(ctx, live, rb.roleplay, turn.idx + 1);
  toPlayers(ctx, live, () => ({ event: state }));
  if (playerOf(live, live.next_speaker) === null) scheduleAgent(ctx, live, rb.roleplay);
}

/** A dialogue just started: its players' pages go to it, and the agent starts if it speaks first. */
export function announceStart(ctx: RelayContext, dialogueId: number | null): void {
  const live = dialogueId === null ? undefined : getLiveDialogue(ctx.deps.db, dialogueId);
  if (!live) return;
  toPlayers(ctx, live, () => ({ event: { type: 'go', to: 'play' } }));
  const rb = roleplayBatch(ctx.deps.db, live.batch_id);
  if (rb && playerOf(live, live.next_speaker) === null) scheduleAgent(ctx, live, rb.roleplay);
}

export function endNow(ctx: RelayContext, live: LiveDialogueRow, roleplay: RoleplaySettings, reason: EndReason, culprit: number | null): void {
  if (endLiveDialogue(ctx.deps.db, live.dialogue_id, roleplay, { reason, culprit }, ctx.deps.clock())) publishEnd(ctx, live);
}

/**
 * Asks the agent for its turn. Its answer is kept until its moment (agent-pace.ts) and stored by the next tick after
 * it; a call that fails for good ends the dialogue, and its partner is told their partner left (as for a person).
 */
export function scheduleAgent(ctx: RelayContext, live: LiveDialogueRow, roleplay: RoleplaySettings): void {
  const { db, agent } = ctx.deps;
  const fallback = roleplay.partner.fallback;
  const dialogue = getDialogue(db, live.dialogue_id);
  if (!agent || !fallback || !dialogue || ctx.pending.has(live.dialogue_id) || ctx.stopped) return;
  const history = listTurnsAfter(db, live.dialogue_id, -1);
  const entry: PendingAgent = { idx: history.length, ready: null };
  ctx.pending.set(live.dialogue_id, entry);
  const speaker = live.next_speaker;
  const place = { runId: dialogue.run_id, dialogueId: live.dialogue_id, scenarioId: dialogue.scenario_id, castId: dialogue.cast_id, speaker, idx: entry.idx };
  const call: Promise<void> = agent
    .takeTurn(place, history, fallback)
    .then((turn) => {
      if (ctx.pending.get(live.dialogue_id) !== entry) return;
      const partnerText = [...history].reverse().find((t) => t.speaker !== speaker)?.text ?? '';
      const turnMs = Date.parse(live.turn_deadline_at) - Date.parse(live.turn_started_at);
      const delay = agentTurnDelayMs({ text: turn.text, partnerText, wordsPerMinute: fallback.wordsPerMinute, random: ctx.deps.random, capMs: turnMs - 3_000 });
      entry.ready = { turn, showAt: Date.parse(live.turn_started_at) + delay };
    })
    .catch((error: unknown) => {
      if (ctx.stopped || ctx.pending.get(live.dialogue_id) !== entry) return;
      ctx.pending.delete(live.dialogue_id);
      ctx.deps.onError?.(error, `the agent of dialogue ${live.dialogue_id} could not take its turn`);
      const current = getLiveDialogue(db, live.dialogue_id);
      if (current?.state === 'active') endNow(ctx, current, roleplay, 'agent_failed', null);
    })
    .finally(() => ctx.inFlight.delete(call));
  ctx.inFlight.add(call);
}

/** The agent's answer, once its moment has come: stored as its turn if the turn is still its own. */
export function storeAgentTurn(ctx: RelayContext, live: LiveDialogueRow, roleplay: RoleplaySettings): void {
  const entry = ctx.pending.get(live.dialogue_id);
  const ready = entry?.ready;
  if (!entry || !ready || ready.showAt > ctx.deps.clock().getTime()) return;
  ctx.pending.delete(live.dialogue_id);
  const { db, clock } = ctx.deps;
  const outcome = db
    .transaction((): TurnOutcome | null => {
      const current = getLiveDialogue(db, live.dialogue_id);
      if (current?.state !== 'active' || playerOf(current, current.next_speaker) !== null || countTurns(db, current.dialogue_id).turns !== entry.idx) return null;
      const { turn } = ready;
      return storeTurn(db, current, roleplay, { action: turn.action, text: turn.text, raterId: null, clientKey: null, callId: turn.callId, timedOut: false, signals: null }, clock());
    })
    .immediate();
  if (outcome) afterTurn(ctx, live.dialogue_id, outcome);
}

/** The speaker whose turn it is let it pass: a "none" turn, then the partner's turn (or the end). */
export function missTurn(ctx: RelayContext, live: LiveDialogueRow, roleplay: RoleplaySettings): void {
  const { db, clock } = ctx.deps;
  ctx.pending.delete(live.dialogue_id);
  const outcome = db
    .transaction((): TurnOutcome | null => {
      const current = getLiveDialogue(db, live.dialogue_id);
      if (current?.state !== 'active' || current.turn_deadline_at !== live.turn_deadline_at) return null;
      const raterId = playerOf(current, current.next_speaker);
      if (raterId !== null) setMissedTurns(db, raterId, (getPlayer(db, raterId)?.missed_turns ?? 0) + 1);
      return storeTurn(db, current, roleplay, { action: 'none', text: '', raterId, clientKey: null, callId: null, timedOut: true, signals: null }, clock());
    })
    .immediate();
  if (outcome) afterTurn(ctx, live.dialogue_id, outcome);
}
