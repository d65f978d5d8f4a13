import type { Transaction } from 'better-sqlite3';
import type { Db } from '../db/connection.js';
import { getRater, setRaterStatus } from '../rating/rating.queries.js';
import { withdrawRater } from '../rating/rater-flow.js';
import { contactRefusal, findContactDetails } from './contact-details.js';
import { endMessage } from './live-events.js';
import { roleplayBatch, storeTurn, type TurnOutcome } from './live-dialogue.js';
import { countRefusedMessage, endPlayer, getLiveDialogue, getPlayer, insertPlayer, recordAnswers, setMissedTurns, setReportReason, turnByKey } from './live.queries.js';
import { matchLobby } from './lobby.js';
import type { Sink } from './presence.js';
import { afterTurn, endNow, type RelayContext, stateEvent, type TurnReply, type TurnRequest, turnEvents } from './relay.js';

// What a player does: enter the lobby, open their page's stream, take their turn, report their partner, answer the
// questions at the end, or withdraw. Each is one transaction and is safe to repeat (a reload, a page that heard no
// answer and sends again with the same key).

/** The player enters the lobby (once) and is matched if a partner is waiting. */
export function joinLobby(ctx: RelayContext, raterId: number): void {
  const rater = getRater(ctx.deps.db, raterId);
  if (!rater) return;
  insertPlayer(ctx.deps.db, { raterId, batchId: rater.batch_id }, ctx.deps.clock());
  matchLobby(ctx, rater.batch_id);
}

/**
 * A page of the player opened its stream: it is sent what it missed (the turns after `afterIdx`, from its
 * Last-Event-ID), then where things stand; a lobby player may now be matched.
 */
export function attachPage(ctx: RelayContext, raterId: number, sink: Sink, afterIdx: number): void {
  ctx.presence.attach(raterId, sink);
  const player = getPlayer(ctx.deps.db, raterId);
  if (!player) return;
  if (player.state === 'lobby') {
    matchLobby(ctx, player.batch_id);
    return;
  }
  const live = player.dialogue_id === null ? undefined : getLiveDialogue(ctx.deps.db, player.dialogue_id);
  const rb = live ? roleplayBatch(ctx.deps.db, live.batch_id) : null;
  if (!live || !rb || player.character === null) {
    sink.send({ type: 'go', to: 'done' });
    return;
  }
  for (const { event, id } of turnEvents(ctx, live, afterIdx, player.character)) sink.send(event, id);
  if (live.state === 'active') sink.send(stateEvent(ctx, live, rb.roleplay));
  else if (player.outcome) sink.send({ type: 'ended', message: endMessage(player.outcome) });
}

export function detachPage(ctx: RelayContext, raterId: number, sink: Sink): void {
  ctx.presence.detach(raterId, sink, ctx.deps.clock().getTime());
}

/** The player's turn: stored once per key, refused when it is not theirs or holds contact details. */
export function takeTurn(ctx: RelayContext, raterId: number, request: TurnRequest): TurnReply {
  const { db, clock } = ctx.deps;
  const contact = request.action === 'leave' ? null : findContactDetails(request.text);
  if (contact) {
    countRefusedMessage(db, raterId);
    return { kind: 'refused', status: 422, message: contactRefusal(contact) };
  }
  const result = turnTransaction(db).immediate(raterId, request, clock());
  if (result.kind !== 'stored' || !('outcome' in result)) return result;
  afterTurn(ctx, result.dialogueId, result.outcome);
  return { kind: 'stored', idx: result.idx };
}

type StoredTurn = { kind: 'stored'; idx: number; dialogueId: number; outcome: TurnOutcome };

// One transaction function per database handle, made once: better-sqlite3 builds a wrapper (and its four modes) each
// time db.transaction is called, and this one runs on every turn.
const turnTransactions = new WeakMap<Db, Transaction<(raterId: number, request: TurnRequest, now: Date) => TurnReply | StoredTurn>>();

function turnTransaction(db: Db): Transaction<(raterId: number, request: TurnRequest, now: Date) => TurnReply | StoredTurn> {
  const known = turnTransactions.get(db);
  if (known) return known;
  const made = db.transaction((raterId: number, request: TurnRequest, now: Date): TurnReply | StoredTurn => {
    const earlier = turnByKey(db, raterId, request.key);
    if (earlier) return { kind: 'duplicate', idx: earlier.idx };
    const player = getPlayer(db, raterId);
    const live = player?.dialogue_id ? getLiveDialogue(db, player.dialogue_id) : undefined;
    const rb = live ? roleplayBatch(db, live.batch_id) : null;
    if (!player || player.state !== 'playing' || !live || live.state !== 'active' || !rb) return { kind: 'refused', status: 409, message: 'This conversation has ended; your message was not sent.' };
    if (live.next_speaker !== player.character) return { kind: 'refused', status: 409, message: 'It is not your turn yet: please wait for your partner.' };
    const text = request.action === 'leave' ? '' : request.text;
    const outcome = storeTurn(db, live, rb.roleplay, { action: request.action, text, raterId, clientKey: request.key, callId: null, timedOut: false, signals: request.signals }, now);
    // A turn taken ends a run of missed ones; most turns follow a turn taken, and need no write.
    if (player.missed_turns !== 0) setMissedTurns(db, raterId, 0);
    return { kind: 'stored', idx: outcome.turn.idx, dialogueId: live.dialogue_id, outcome };
  });
  turnTransactions.set(db, made);
  return made;
}

/** The player reports their partner: the dialogue ends, flagged for the researchers. False when it had ended. */
export function reportPartner(ctx: RelayContext, raterId: number, reason: string | null): boolean {
  const { db } = ctx.deps;
  const player = getPlayer(db, raterId);
  const live = player?.dialogue_id ? getLiveDialogue(db, player.dialogue_id) : undefined;
  const rb = live ? roleplayBatch(db, live.batch_id) : null;
  if (!player || player.state !== 'playing' || !live || live.state !== 'active' || !rb) return false;
  setReportReason(db, raterId, reason);
  endNow(ctx, live, rb.roleplay, 'reported', raterId);
  return true;
}

/** The answers after the dialogue; the player has then completed the study. False when they were not at the questions. */
export function answerQuestions(ctx: RelayContext, raterId: number, answers: { guess: 'person' | 'ai'; goalScore: number }): boolean {
  const { db, clock } = ctx.deps;
  return db
    .transaction(() => {
      if (!recordAnswers(db, raterId, answers, clock())) return false;
      setRaterStatus(db, raterId, 'completed', clock());
      return true;
    })
    .immediate();
}

/** The player withdraws: their dialogue ends (their partner is told and paid), and their data are not used. */
export function withdrawPlayer(ctx: RelayContext, raterId: number): void {
  const { db, clock } = ctx.deps;
  const player = getPlayer(db, raterId);
  const live = player?.dialogue_id ? getLiveDialogue(db, player.dialogue_id) : undefined;
  const rb = live ? roleplayBatch(db, live.batch_id) : null;
  if (live?.state === 'active' && rb) endNow(ctx, live, rb.roleplay, 'withdrew', raterId);
  else if (player?.state === 'lobby') endPlayer(db, raterId, { state: 'done', outcome: 'away', waitedMs: Math.max(0, clock().getTime() - Date.parse(player.lobby_at)) }, clock());
  const rater = getRater(db, raterId);
  if (rater) withdrawRater(db, rater, clock());
  ctx.presence.forget(raterId);
}
