import type { Db } from '../db/connection.js';
import { median } from '../numbers/median.js';

// What the console shows of a role-play batch as it runs: where its players are, how they ended, how long they waited.

export type LiveSummary = {
  lobby: number;
  playing: number;
  answering: number;
  done: number;
  activeDialogues: number;
  /** Players by outcome (finished, partner_left, no_partner, ...). */
  outcomes: Record<string, number>;
  /** Median seconds in the lobby of players who left it (matched or sent home); null for none. */
  medianWaitSeconds: number | null;
};

export function liveSummary(db: Db, batchId: number): LiveSummary {
  const states = db
    .prepare<{ batchId: number }, { state: string; n: number }>('SELECT state, count(*) AS n FROM live_players WHERE batch_id = :batchId GROUP BY state')
    .all({ batchId });
  const count = (state: string) => states.find((s) => s.state === state)?.n ?? 0;
  const outcomes = Object.fromEntries(
    db
      .prepare<{ batchId: number }, { outcome: string; n: number }>('SELECT outcome, count(*) AS n FROM live_players WHERE batch_id = :batchId AND outcome IS NOT NULL GROUP BY outcome ORDER BY outcome')
      .all({ batchId })
      .map((r) => [r.outcome, r.n]),
  );
  const waits = db
    .prepare<{ batchId: number }, number>("SELECT waited_ms FROM live_players WHERE batch_id = :batchId AND (matched_at IS NOT NULL OR outcome IN ('no_partner', 'closed'))")
    .pluck()
    .all({ batchId });
  const activeDialogues = db.prepare<{ batchId: number }, number>("SELECT count(*) FROM live_dialogues WHERE batch_id = :batchId AND state = 'active'").pluck().get({ batchId }) ?? 0;
  const mid = median(waits);
  return { lobby: count('lobby'), playing: count('playing'), answering: count('answering'), done: count('done'), activeDialogues, outcomes, medianWaitSeconds: mid === null ? null : Math.round(mid / 100) / 10 };
}

/** What the review list adds to a collected dialogue: its players' outcomes and a report's reason. */
export type PlayerNote = { dialogue_id: number; character: number; outcome: string | null; report_reason: string | null };

export function playerNotes(db: Db, batchId: number): Map<number, PlayerNote[]> {
  const rows = db
    .prepare<{ batchId: number }, PlayerNote>(
      'SELECT dialogue_id, character, outcome, report_reason FROM live_players WHERE batch_id = :batchId AND dialogue_id IS NOT NULL ORDER BY dialogue_id, character',
    )
    .all({ batchId });
  const notes = new Map<number, PlayerNote[]>();
  for (const row of rows) notes.set(row.dialogue_id, [...(notes.get(row.dialogue_id) ?? []), row]);
  return notes;
}
