import type { RoleplaySettings } from '../batches/batch.schema.js';
import { setRaterStatus } from '../rating/rating.queries.js';
import { roleplayBatch, tryStartLiveDialogue } from './live-dialogue.js';
import { endPlayer, listLobby, type LobbyPlayer, type PlayerOutcome } from './live.queries.js';
import { announceStart, type RelayContext } from './relay.js';

// The lobby (issue 52): a player waits there until a partner is present too (Mephisto launches an assignment only once
// all its workers are waiting: operations/worker_pool.py), and no longer than the batch's wait: then the fallback agent
// plays with them (Sotopia's chat server pairs a lone person with a model after WAITING_ROOM_TIMEOUT), or, without
// one, they go home with the paid "no partner" code. Nobody is matched with themselves, and, unless the batch allows
// it, not with someone from the same internet address (two windows of one plain link).

/** Two lobby players who may be partners. */
export function mayBePartners(a: LobbyPlayer, b: LobbyPlayer, roleplay: RoleplaySettings): boolean {
  if (a.rater_id === b.rater_id) return false;
  if (a.person_key !== null && a.person_key === b.person_key) return false;
  return roleplay.partner.sameAddress || a.address_hash === null || a.address_hash !== b.address_hash;
}

/** Pairs the present players of a batch's lobby, longest waiting first, each with the longest waiting one they may meet. */
export function matchLobby(ctx: RelayContext, batchId: number, lobby: LobbyPlayer[] = listLobby(ctx.deps.db)): void {
  const rb = roleplayBatch(ctx.deps.db, batchId);
  if (!rb || rb.batch.state !== 'open') return;
  const waiting = lobby.filter((p) => p.batch_id === batchId && ctx.presence.present(p.rater_id));
  while (waiting.length >= 2) {
    const first = waiting.shift() as LobbyPlayer;
    const at = waiting.findIndex((other) => mayBePartners(first, other, rb.roleplay));
    if (at < 0) continue;
    const [second] = waiting.splice(at, 1) as [LobbyPlayer];
    // Who plays character 1 (and speaks first) is drawn, not who came first.
    const [one, two] = ctx.deps.random() < 0.5 ? [first, second] : [second, first];
    const id = tryStartLiveDialogue(ctx.deps.db, {
      batchId,
      roleplay: rb.roleplay,
      players: [
        { raterId: one.rater_id, lobbyAt: one.lobby_at },
        { raterId: two.rater_id, lobbyAt: two.lobby_at },
      ],
      now: ctx.deps.clock(),
    });
    announceStart(ctx, id);
  }
}

/** A lobby player leaves it for good: home with a code (`no_partner`, `closed`), or gone (`away`). */
function leaveLobby(ctx: RelayContext, player: LobbyPlayer, outcome: PlayerOutcome): void {
  const { db, clock } = ctx.deps;
  const now = clock();
  const left = db
    .transaction(() => {
      const done = endPlayer(db, player.rater_id, { state: 'done', outcome, waitedMs: Math.max(0, now.getTime() - Date.parse(player.lobby_at)) }, now);
      // Waiting was their part of the study: they completed it and are paid (docs/researcher/roleplay.md).
      if (done && outcome !== 'away') setRaterStatus(db, player.rater_id, 'completed', now);
      return done;
    })
    .immediate();
  if (left) ctx.presence.send(player.rater_id, { type: 'go', to: 'done' });
}

/** The wait is over: the fallback agent plays with the player, or they go home with the "no partner" code. */
function endWait(ctx: RelayContext, player: LobbyPlayer, roleplay: RoleplaySettings, open: boolean): void {
  if (open && roleplay.partner.fallback && ctx.deps.agent) {
    const me = { raterId: player.rater_id, lobbyAt: player.lobby_at };
    const players: [typeof me | null, typeof me | null] = ctx.deps.random() < 0.5 ? [me, null] : [null, me];
    const id = tryStartLiveDialogue(ctx.deps.db, { batchId: player.batch_id, roleplay, players, now: ctx.deps.clock() });
    announceStart(ctx, id);
    return;
  }
  leaveLobby(ctx, player, 'no_partner');
}

/**
 * The lobby's clocks, after matching whoever can be matched: players away too long leave it, a closed batch sends
 * everyone home, and waits that ran out end.
 */
export function tickLobby(ctx: RelayContext): void {
  const { db } = ctx.deps;
  const before = listLobby(db);
  for (const batchId of new Set(before.map((p) => p.batch_id))) matchLobby(ctx, batchId, before);
  const nowMs = ctx.deps.clock().getTime();
  for (const player of listLobby(db)) {
    const rb = roleplayBatch(db, player.batch_id);
    if (!rb) continue;
    if (ctx.presence.awayMs(player.rater_id, nowMs, Date.parse(player.lobby_at)) > rb.roleplay.partner.awaySeconds * 1000) leaveLobby(ctx, player, 'away');
    else if (rb.batch.state === 'closed') leaveLobby(ctx, player, 'closed');
    else if (nowMs - Date.parse(player.lobby_at) >= rb.roleplay.partner.waitSeconds * 1000) endWait(ctx, player, rb.roleplay, rb.batch.state === 'open');
  }
}
