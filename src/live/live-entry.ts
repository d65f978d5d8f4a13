import type { BatchRow } from '../batches/batch.queries.js';
import type { BatchSettings } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { createEnteredRater, type Limited, type Returning, findReturningRater } from '../rating/rater-pool.js';
import type { EntryIdentity } from '../rating/rater-token.js';
import { countRatersFromAddress, getRater, participantRatedIn, type RaterRow } from '../rating/rating.queries.js';

// Who may enter a role-play batch: the rating side's identity rules (src/rating/rater-pool.ts), so one person is one
// participant: one rater per provider identity (a new Prolific session or MTurk assignment continues theirs), nobody
// from an earlier round the batch blocks, nobody before consent, and no address taking more than its share. There are
// no pairs to reserve: a role-play batch is full only when its recruiting platform says so.

const BLOCKED_MESSAGE =
  'Our records show that you already took part in an earlier round of this study, and this round is open to new participants only, ' +
  'so you cannot take part again. Nothing has been recorded. Please return the study on your recruitment platform so that your place goes to someone else.';

export type LiveEntryDecision = Returning | Limited | { kind: 'blocked'; message: string } | { kind: 'open' };

/** Raters of this address who are in the study now (past consent, not finished). */
function activeFromAddress(db: Db, batchId: number, addressHash: string): number {
  return (
    db
      .prepare<{ batchId: number; addressHash: string }, number>(
        "SELECT count(*) FROM raters WHERE batch_id = :batchId AND address_hash = :addressHash AND status IN ('instructions', 'rating')",
      )
      .pluck()
      .get({ batchId, addressHash }) ?? 0
  );
}

function addressLimit(db: Db, batch: BatchRow, settings: BatchSettings, addressHash: string | null, now: Date): Limited | null {
  if (!addressHash) return null;
  const limits = settings.addressLimits;
  if (countRatersFromAddress(db, batch.id, addressHash, new Date(now.getTime() - limits.windowMinutes * 60_000)) >= limits.ratersPerWindow) {
    return {
      kind: 'limited',
      retryAfterMinutes: limits.windowMinutes,
      message: `Too many people have started this study from your internet connection recently. Please try again in about ${limits.windowMinutes} minutes, or from another connection.`,
    };
  }
  if (activeFromAddress(db, batch.id, addressHash) >= limits.activeRaters) {
    return { kind: 'limited', retryAfterMinutes: 10, message: 'Too many sessions of this study are open from your internet connection at the moment. Please finish or close the other sessions first.' };
  }
  return null;
}

function decide(db: Db, batch: BatchRow, settings: BatchSettings, entry: EntryIdentity, addressHash: string | null, now: Date): LiveEntryDecision {
  const returning = findReturningRater(db, batch, entry, now);
  if (returning) return returning;
  if (entry.kind !== 'link' && participantRatedIn(db, entry.kind, entry.participantId, settings.blockParticipantsOf)) return { kind: 'blocked', message: BLOCKED_MESSAGE };
  return addressLimit(db, batch, settings, addressHash, now) ?? { kind: 'open' };
}

/** What an entry link leads to, before anyone consents (nothing is created). */
export function decideLiveEntry(db: Db, batch: BatchRow, settings: BatchSettings, entry: EntryIdentity, addressHash: string | null, now: Date): LiveEntryDecision {
  return db.transaction(() => decide(db, batch, settings, entry, addressHash, now)).immediate();
}

export type LiveAdmission = Exclude<LiveEntryDecision, { kind: 'open' }> | { kind: 'admitted'; rater: RaterRow };

/** The answer at consent: the rater made (at the instructions), or a no-consent rater for the provider's code. */
export function admitPlayer(
  db: Db,
  batch: BatchRow,
  settings: BatchSettings,
  entry: EntryIdentity,
  input: { agree: boolean; raterPublicId: string; userAgent: string | null; addressHash: string | null; now: Date },
): LiveAdmission {
  return db
    .transaction((): LiveAdmission => {
      const decision = decide(db, batch, settings, entry, input.addressHash, input.now);
      if (decision.kind !== 'open') return decision;
      const id = createEnteredRater(db, batch, entry, { ...input, promised: null });
      const rater = getRater(db, id);
      if (!rater) throw new Error('rater vanished inside its own transaction');
      return { kind: 'admitted', rater };
    })
    .immediate();
}
