import type { BatchRow } from '../batches/batch.queries.js';
import { type RoleplaySettings, roleplayOf } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { cachedBatchRow } from '../batches/batch-row-cache.js';
import { endCollected, insertCollected } from '../batches/collected.queries.js';
import { collectionSlots } from '../batches/collection.js';
import type { Db } from '../db/connection.js';
import { countTurnWords } from '../generation/dialogue-words.js';
import { insertDialogue } from '../generation/dialogue.queries.js';
import { HUMAN_MODEL, type Action } from '../generation/mode.js';
import { findRun } from '../generation/run.queries.js';
import { nextSample } from './allocate-sample.js';
import {
  countTurns,
  endPlayer,
  getLiveDialogue,
  insertLiveDialogue,
  insertLiveTurn,
  lastTurnsMissed,
  type LiveDialogueRow,
  type LiveTurn,
  markLiveDialogueEnded,
  type NewLiveTurn,
  nextTurnIdx,
  type PlayerOutcome,
  setNextTurn,
  setPlayerPlaying,
} from './live.queries.js';

// A live dialogue's life in the database: started for two players (HUMANS) or one and the agent (HUMAN_AGENT), one
// turn at a time in Sotopia's round-robin order, ended once with a reason that decides how it is collected and what
// each player's outcome is. Every change is one transaction; the relay (relay.ts) tells the players after it commits.

/** Why a live dialogue ended. The first two are its natural ends; the others end it early. */
export type EndReason = 'max_turns' | 'left' | 'left_early' | 'timed_out' | 'away' | 'withdrew' | 'reported' | 'agent_failed';

type Ending = { collected: 'complete' | 'incomplete' | 'reported'; culprit: PlayerOutcome; other: PlayerOutcome };

/**
 * The collected outcome and each player's outcome for each way to end. `culprit` is the player whose act or absence
 * ended it (the reporter for a report); the partner who stayed gets `other`, and is paid (Mephisto pays the worker
 * who stayed when a partner disconnects: issue #642).
 */
export const ENDINGS: Record<EndReason, Ending> = {
  max_turns: { collected: 'complete', culprit: 'finished', other: 'finished' },
  left: { collected: 'complete', culprit: 'finished', other: 'finished' },
  left_early: { collected: 'incomplete', culprit: 'left_early', other: 'partner_left' },
  timed_out: { collected: 'incomplete', culprit: 'timed_out', other: 'partner_left' },
  away: { collected: 'incomplete', culprit: 'away', other: 'partner_left' },
  withdrew: { collected: 'incomplete', culprit: 'away', other: 'partner_left' },
  reported: { collected: 'reported', culprit: 'reported', other: 'was_reported' },
  agent_failed: { collected: 'incomplete', culprit: 'partner_left', other: 'partner_left' },
};

/** A turn's player: the rater playing that character, or null for the agent. */
export function playerOf(live: Pick<LiveDialogueRow, 'player_1' | 'player_2'>, speaker: 1 | 2): number | null {
  return speaker === 1 ? live.player_1 : live.player_2;
}

export function humansOf(live: Pick<LiveDialogueRow, 'player_1' | 'player_2'>): number[] {
  return [live.player_1, live.player_2].filter((p): p is number => p !== null);
}

/** A batch row and its role-play settings, or null for a batch that is gone or not a role-play batch. */
export function roleplayBatch(db: Db, batchId: number): { batch: BatchRow; roleplay: RoleplaySettings } | null {
  const batch = cachedBatchRow(db, batchId);
  const roleplay = batch ? roleplayOf(readBatchSettings(batch)) : null;
  return batch && roleplay ? { batch, roleplay } : null;
}

/** The first turn is longer: the one who starts reads the scenario and their profile first. */
export function firstTurnMs(roleplay: RoleplaySettings): number {
  return 2 * roleplay.turns.turnSeconds * 1000;
}

export type StartInput = {
  batchId: number;
  roleplay: RoleplaySettings;
  /** Character 1's player then character 2's; null is the agent. */
  players: [{ raterId: number; lobbyAt: string } | null, { raterId: number; lobbyAt: string } | null];
  now: Date;
};

/**
 * Starts a live dialogue: the next scenario sample of the collection run, the dialogue (running, collected), its live
 * row and each player's match, in one transaction. Null when a player was matched meanwhile (nothing is written).
 */
export function startLiveDialogue(db: Db, input: StartInput): number | null {
  const { roleplay, now, players } = input;
  return db.transaction((): number | null => {
    const run = findRun(db, roleplay.run);
    if (!run) throw new Error(`collection run "${roleplay.run}" of batch ${input.batchId} is gone`);
    const agentCharacter = players[0] === null ? 1 : players[1] === null ? 2 : null;
    const mode = agentCharacter === null ? 'HUMANS' : 'HUMAN_AGENT';
    const batch = cachedBatchRow(db, input.batchId);
    const slots = batch ? collectionSlots(db, readBatchSettings(batch).scenarios) : [];
    const sample = nextSample(db, run.id, slots, mode);
    if (!sample) throw new Error(`batch ${input.batchId} has no scenario cast left to play`);
    const meta = agentCharacter === null ? {} : { human_character: agentCharacter === 1 ? 2 : 1, agent: { model: roleplay.partner.fallback?.model, endpoint: roleplay.partner.fallback?.endpoint } };
    const model = agentCharacter === null ? HUMAN_MODEL : (roleplay.partner.fallback?.model ?? '');
    const dialogueId = insertDialogue(db, { runId: run.id, ...sample, mode, model, origin: 'collected', state: 'running', meta }, now);
    insertCollected(db, { dialogueId, batchId: input.batchId, task: 'roleplay' }, now);
    insertLiveDialogue(db, { dialogueId, batchId: input.batchId, players: [players[0]?.raterId ?? null, players[1]?.raterId ?? null], deadline: new Date(now.getTime() + firstTurnMs(roleplay)) }, now);
    for (const [i, player] of players.entries()) {
      if (!player) continue;
      const matched = setPlayerPlaying(db, player.raterId, { dialogueId, character: (i + 1) as 1 | 2, waitedMs: Math.max(0, now.getTime() - Date.parse(player.lobbyAt)) }, now);
      if (!matched) throw new NotInLobby();
    }
    return dialogueId;
  }).immediate();
}

class NotInLobby extends Error {}

/** startLiveDialogue, with a player no longer in the lobby (matched or gone meanwhile) answered as null. */
export function tryStartLiveDialogue(db: Db, input: StartInput): number | null {
  try {
    return startLiveDialogue(db, input);
  } catch (error) {
    if (error instanceof NotInLobby) return null;
    throw error;
  }
}

export type TurnInput = { action: Action; text: string; raterId: number | null; clientKey: string | null; callId: number | null; timedOut: boolean; signals: NewLiveTurn['signals'] };

/** What a stored turn led to: the next turn, or the end of the dialogue. */
export type TurnOutcome = {
  /** The turn as stored, and the dialogue's row after it when it goes on (its next speaker and deadline): what the pages are sent, without reading them again. */
  turn: LiveTurn;
  after: LiveDialogueRow | null;
  ended: { reason: EndReason; culprit: number | null } | null;
};

/**
 * Stores the turn of the speaker whose turn it is and moves on: to the partner's turn, or to the end (a leave, the
 * last turn, or a second missed turn in a row: Sotopia's max_stale_turn of 2), inside the caller's transaction.
 */
export function storeTurn(db: Db, live: LiveDialogueRow, roleplay: RoleplaySettings, turn: TurnInput, now: Date): TurnOutcome {
  const speaker = live.next_speaker;
  const idx = nextTurnIdx(db, live.dialogue_id);
  insertLiveTurn(db, { dialogueId: live.dialogue_id, idx, speaker, ...turn, turnStartedAt: live.turn_started_at }, now);
  const culprit = playerOf(live, speaker);
  let reason: EndReason | null = null;
  if (turn.action === 'leave') reason = countTurns(db, live.dialogue_id).spoken >= roleplay.turns.min ? 'left' : 'left_early';
  else if (turn.timedOut && lastTurnsMissed(db, live.dialogue_id, speaker, 2)) reason = 'timed_out';
  else if (idx + 1 >= roleplay.turns.max) reason = 'max_turns';
  const stored: LiveTurn = { idx, speaker, action: turn.action, text: turn.text };
  if (reason) {
    endLiveDialogue(db, live.dialogue_id, roleplay, { reason, culprit }, now);
    return { turn: stored, after: null, ended: { reason, culprit } };
  }
  const nextSpeaker: 1 | 2 = speaker === 1 ? 2 : 1;
  const deadline = new Date(now.getTime() + roleplay.turns.turnSeconds * 1000);
  setNextTurn(db, live.dialogue_id, { speaker: nextSpeaker, startedAt: now, deadline });
  const after: LiveDialogueRow = { ...live, next_speaker: nextSpeaker, turn_started_at: now.toISOString(), turn_deadline_at: deadline.toISOString() };
  return { turn: stored, after, ended: null };
}

/**
 * Ends a live dialogue once (a second end, from a race or a second process, changes nothing and returns false): the
 * dialogue complete when it has its batch's minimum of spoken turns, else failed (never rated); its collected outcome;
 * each player on to the questions, or done when they are gone. Inside the caller's transaction, or its own.
 */
export function endLiveDialogue(db: Db, dialogueId: number, roleplay: RoleplaySettings, end: { reason: EndReason; culprit: number | null }, now: Date): boolean {
  return db.transaction((): boolean => {
    const live = getLiveDialogue(db, dialogueId);
    if (!live || !markLiveDialogueEnded(db, dialogueId, end.reason, now)) return false;
    const { spoken } = countTurns(db, dialogueId);
    const complete = spoken >= roleplay.turns.min;
    const words = countTurnWords(db.prepare<{ dialogueId: number }, { text: string }>('SELECT text FROM turns WHERE dialogue_id = :dialogueId').all({ dialogueId }));
    db.prepare(
      `UPDATE dialogues SET state = :state, end_reason = :reason, failure_reason = :failure, completed_at = :now, words = :words WHERE id = :dialogueId`,
    ).run({
      dialogueId,
      state: complete ? 'complete' : 'failed',
      reason: end.reason,
      failure: complete ? null : `only ${spoken} spoken turn(s), fewer than the batch's minimum of ${roleplay.turns.min} (${end.reason})`,
      now: now.toISOString(),
      words,
    });
    const ending = ENDINGS[end.reason];
    endCollected(db, dialogueId, { outcome: ending.collected, reason: `${end.reason} after ${spoken} spoken turn(s)` }, now);
    for (const raterId of humansOf(live)) {
      const outcome = raterId === end.culprit ? ending.culprit : ending.other;
      endPlayer(db, raterId, { state: outcome === 'away' ? 'done' : 'answering', outcome }, now);
    }
    return true;
  }).immediate();
}
