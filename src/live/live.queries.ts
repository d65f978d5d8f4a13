import type { Db } from '../db/connection.js';
import type { Action } from '../generation/mode.js';

// The live tables (migration 060): players (raters of a role-play batch past the instructions), the dialogues being
// played and the provenance of each of their turns. Written only by src/live/.

export type PlayerState = 'lobby' | 'playing' | 'answering' | 'done';
export type PlayerOutcome = 'finished' | 'partner_left' | 'no_partner' | 'timed_out' | 'away' | 'left_early' | 'reported' | 'was_reported' | 'closed';

export type PlayerRow = {
  rater_id: number;
  batch_id: number;
  state: PlayerState;
  lobby_at: string;
  matched_at: string | null;
  dialogue_id: number | null;
  character: 1 | 2 | null;
  outcome: PlayerOutcome | null;
  partner_guess: 'person' | 'ai' | null;
  goal_score: number | null;
  waited_ms: number;
  missed_turns: number;
  refused_messages: number;
  ended_at: string | null;
};

const PLAYER_COLUMNS =
  'rater_id, batch_id, state, lobby_at, matched_at, dialogue_id, character, outcome, partner_guess, goal_score, waited_ms, missed_turns, refused_messages, ended_at';

/** A player enters the lobby once: a second call (a reload, a second process) finds the row the first made. */
export function insertPlayer(db: Db, player: { raterId: number; batchId: number }, now: Date): void {
  db.prepare("INSERT OR IGNORE INTO live_players (rater_id, batch_id, state, lobby_at) VALUES (:raterId, :batchId, 'lobby', :now)").run({
    ...player,
    now: now.toISOString(),
  });
}

export function getPlayer(db: Db, raterId: number): PlayerRow | undefined {
  return db.prepare<{ raterId: number }, PlayerRow>(`SELECT ${PLAYER_COLUMNS} FROM live_players WHERE rater_id = :raterId`).get({ raterId });
}

/** A player in a lobby, with what matching needs of their rater row. */
export type LobbyPlayer = PlayerRow & { address_hash: string | null; person_key: string | null };

/** Read twice a tick: by the lobby index alone (migration 077), never every player the server ever had. */
export const LOBBY_SQL = `SELECT ${PLAYER_COLUMNS
  .split(', ')
  .map((c) => `p.${c}`)
  .join(', ')}, r.address_hash, r.person_key
  FROM live_players p JOIN raters r ON r.id = p.rater_id WHERE p.state = 'lobby' ORDER BY p.lobby_at, p.rater_id`;

/** Every player waiting in a lobby (of any batch), longest waiting first. */
export function listLobby(db: Db): LobbyPlayer[] {
  return db.prepare<[], LobbyPlayer>(LOBBY_SQL).all();
}

export function setPlayerPlaying(db: Db, raterId: number, match: { dialogueId: number; character: 1 | 2; waitedMs: number }, now: Date): boolean {
  return (
    db
      .prepare(
        `UPDATE live_players SET state = 'playing', matched_at = :now, dialogue_id = :dialogueId, character = :character, waited_ms = :waitedMs
         WHERE rater_id = :raterId AND state = 'lobby'`,
      )
      .run({ raterId, ...match, now: now.toISOString() }).changes > 0
  );
}

/** A player's part ends: to the questions (`answering`) or straight to the end (`done`), with their outcome. */
export function endPlayer(db: Db, raterId: number, end: { state: 'answering' | 'done'; outcome: PlayerOutcome; waitedMs?: number }, now: Date): boolean {
  return (
    db
      .prepare(
        `UPDATE live_players SET state = :state, outcome = :outcome, waited_ms = coalesce(:waitedMs, waited_ms),
           ended_at = CASE WHEN :state = 'done' THEN :now ELSE ended_at END
         WHERE rater_id = :raterId AND state IN ('lobby', 'playing')`,
      )
      .run({ raterId, state: end.state, outcome: end.outcome, waitedMs: end.waitedMs ?? null, now: now.toISOString() }).changes > 0
  );
}

export function recordAnswers(db: Db, raterId: number, answers: { guess: 'person' | 'ai' | null; goalScore: number | null }, now: Date): boolean {
  return (
    db
      .prepare(
        `UPDATE live_players SET state = 'done', partner_guess = :guess, goal_score = :goalScore, ended_at = :now
         WHERE rater_id = :raterId AND state = 'answering'`,
      )
      .run({ raterId, ...answers, now: now.toISOString() }).changes > 0
  );
}

export function setReportReason(db: Db, raterId: number, reason: string | null): void {
  db.prepare('UPDATE live_players SET report_reason = :reason WHERE rater_id = :raterId').run({ raterId, reason });
}

export function countRefusedMessage(db: Db, raterId: number): void {
  db.prepare('UPDATE live_players SET refused_messages = refused_messages + 1 WHERE rater_id = :raterId').run({ raterId });
}

export function setMissedTurns(db: Db, raterId: number, missed: number): void {
  db.prepare('UPDATE live_players SET missed_turns = :missed WHERE rater_id = :raterId').run({ raterId, missed });
}

export type LiveDialogueRow = {
  dialogue_id: number;
  batch_id: number;
  player_1: number | null;
  player_2: number | null;
  state: 'active' | 'ended';
  next_speaker: 1 | 2;
  turn_started_at: string;
  turn_deadline_at: string;
  end_reason: string | null;
  started_at: string;
  ended_at: string | null;
};

const DIALOGUE_COLUMNS = 'dialogue_id, batch_id, player_1, player_2, state, next_speaker, turn_started_at, turn_deadline_at, end_reason, started_at, ended_at';

export function insertLiveDialogue(
  db: Db,
  row: { dialogueId: number; batchId: number; players: [number | null, number | null]; deadline: Date },
  now: Date,
): void {
  db.prepare(
    `INSERT INTO live_dialogues (dialogue_id, batch_id, player_1, player_2, state, next_speaker, turn_started_at, turn_deadline_at, started_at)
     VALUES (:dialogueId, :batchId, :player1, :player2, 'active', 1, :now, :deadline, :now)`,
  ).run({ dialogueId: row.dialogueId, batchId: row.batchId, player1: row.players[0], player2: row.players[1], deadline: row.deadline.toISOString(), now: now.toISOString() });
}

export function getLiveDialogue(db: Db, dialogueId: number): LiveDialogueRow | undefined {
  return db.prepare<{ dialogueId: number }, LiveDialogueRow>(`SELECT ${DIALOGUE_COLUMNS} FROM live_dialogues WHERE dialogue_id = :dialogueId`).get({ dialogueId });
}

export function listActiveDialogues(db: Db): LiveDialogueRow[] {
  return db.prepare<[], LiveDialogueRow>(`SELECT ${DIALOGUE_COLUMNS} FROM live_dialogues WHERE state = 'active' ORDER BY dialogue_id`).all();
}

export function setNextTurn(db: Db, dialogueId: number, next: { speaker: 1 | 2; startedAt: Date; deadline: Date }): void {
  db.prepare(
    `UPDATE live_dialogues SET next_speaker = :speaker, turn_started_at = :startedAt, turn_deadline_at = :deadline WHERE dialogue_id = :dialogueId AND state = 'active'`,
  ).run({ dialogueId, speaker: next.speaker, startedAt: next.startedAt.toISOString(), deadline: next.deadline.toISOString() });
}

/** Gives the turn under way a new deadline, never an earlier one (a restart gives players time to come back). */
export function extendDeadline(db: Db, dialogueId: number, deadline: Date): void {
  db.prepare(`UPDATE live_dialogues SET turn_deadline_at = max(turn_deadline_at, :deadline) WHERE dialogue_id = :dialogueId AND state = 'active'`).run({
    dialogueId,
    deadline: deadline.toISOString(),
  });
}

export function markLiveDialogueEnded(db: Db, dialogueId: number, reason: string, now: Date): boolean {
  return (
    db
      .prepare(`UPDATE live_dialogues SET state = 'ended', end_reason = :reason, ended_at = :now WHERE dialogue_id = :dialogueId AND state = 'active'`)
      .run({ dialogueId, reason, now: now.toISOString() }).changes > 0
  );
}

export type LiveTurn = { idx: number; speaker: 1 | 2; action: Action; text: string };

/** The turns of a dialogue after `afterIdx` (-1: all), in order. */
export function listTurnsAfter(db: Db, dialogueId: number, afterIdx: number): LiveTurn[] {
  return db
    .prepare<{ dialogueId: number; afterIdx: number }, LiveTurn>('SELECT idx, speaker, action, text FROM turns WHERE dialogue_id = :dialogueId AND idx > :afterIdx ORDER BY idx')
    .all({ dialogueId, afterIdx });
}

export function countTurns(db: Db, dialogueId: number): { turns: number; spoken: number } {
  return db
    .prepare<{ dialogueId: number }, { turns: number; spoken: number }>(
      "SELECT count(*) AS turns, coalesce(sum(action IN ('speak', 'non-verbal', 'action')), 0) AS spoken FROM turns WHERE dialogue_id = :dialogueId",
    )
    .get({ dialogueId }) ?? { turns: 0, spoken: 0 };
}

/**
 * The index the dialogue's next turn takes: its turns so far (their indexes run from 0 without a gap), read from the
 * (dialogue_id, idx) index rather than counted, as every turn asks it (the live relay benchmark).
 */
export function nextTurnIdx(db: Db, dialogueId: number): number {
  return db.prepare<{ dialogueId: number }, { next: number }>('SELECT coalesce(max(idx) + 1, 0) AS next FROM turns WHERE dialogue_id = :dialogueId').get({ dialogueId })?.next ?? 0;
}

export type NewLiveTurn = LiveTurn & {
  dialogueId: number;
  raterId: number | null;
  clientKey: string | null;
  callId: number | null;
  turnStartedAt: string;
  timedOut: boolean;
  signals: { keystrokes: number; typingMs: number; pasteAttempts: number } | null;
};

/** A turn and its provenance, in the caller's transaction. */
export function insertLiveTurn(db: Db, t: NewLiveTurn, now: Date): void {
  db.prepare('INSERT INTO turns (dialogue_id, idx, speaker, action, text, call_id) VALUES (:dialogueId, :idx, :speaker, :action, :text, :callId)').run({
    dialogueId: t.dialogueId,
    idx: t.idx,
    speaker: t.speaker,
    action: t.action,
    text: t.text,
    callId: t.callId,
  });
  db.prepare(
    `INSERT INTO live_turns (dialogue_id, idx, rater_id, client_key, turn_started_at, sent_at, timed_out, keystrokes, typing_ms, paste_attempts)
     VALUES (:dialogueId, :idx, :raterId, :clientKey, :turnStartedAt, :now, :timedOut, :keystrokes, :typingMs, :pasteAttempts)`,
  ).run({
    dialogueId: t.dialogueId,
    idx: t.idx,
    raterId: t.raterId,
    clientKey: t.clientKey,
    turnStartedAt: t.turnStartedAt,
    now: now.toISOString(),
    timedOut: t.timedOut ? 1 : 0,
    keystrokes: t.signals?.keystrokes ?? null,
    typingMs: t.signals?.typingMs ?? null,
    pasteAttempts: t.signals?.pasteAttempts ?? null,
  });
}

/** The turn a player's page already sent with this key, if any (the page sends again when it heard no answer). */
export function turnByKey(db: Db, raterId: number, clientKey: string): { dialogue_id: number; idx: number } | undefined {
  return db
    .prepare<{ raterId: number; clientKey: string }, { dialogue_id: number; idx: number }>('SELECT dialogue_id, idx FROM live_turns WHERE rater_id = :raterId AND client_key = :clientKey')
    .get({ raterId, clientKey });
}

/** Whether the last `n` turns of this speaker were all missed (timed out). */
export function lastTurnsMissed(db: Db, dialogueId: number, speaker: 1 | 2, n: number): boolean {
  const rows = db
    .prepare<{ dialogueId: number; speaker: number; n: number }, number>(
      `SELECT lt.timed_out FROM turns t JOIN live_turns lt ON lt.dialogue_id = t.dialogue_id AND lt.idx = t.idx
       WHERE t.dialogue_id = :dialogueId AND t.speaker = :speaker ORDER BY t.idx DESC LIMIT :n`,
    )
    .pluck()
    .all({ dialogueId, speaker, n });
  return rows.length === n && rows.every((missed) => missed === 1);
}
