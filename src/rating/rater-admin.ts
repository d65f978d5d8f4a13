import { recordAudit } from '../audit/audit.queries.js';
import type { Db } from '../db/connection.js';
import { HttpError } from '../web/http-error.js';

// Admin writes on raters and their data, requested from the console. Nothing here recomputes statistics: the
// analysis is cached under a data version that changes with judgments and exclusions, so the next read recomputes.

type RaterRef = { id: number; batch_id: number; excluded: number; provider: string };

function findRater(db: Db, batchId: number, raterId: number): RaterRef {
  const rater = db
    .prepare<{ batchId: number; raterId: number }, RaterRef>('SELECT id, batch_id, excluded, provider FROM raters WHERE id = :raterId AND batch_id = :batchId')
    .get({ batchId, raterId });
  if (!rater) throw new HttpError(404, 'This batch has no such rater.');
  return rater;
}

/** Excludes a rater from every statistic and export of the batch (or re-includes them), with the reason kept. */
export function setRaterExcluded(
  db: Db,
  input: { batchId: number; raterId: number; excluded: boolean; reason: string },
  actor: string,
  now: Date,
): void {
  db.transaction(() => {
    const rater = findRater(db, input.batchId, input.raterId);
    db.prepare('UPDATE raters SET excluded = :excluded, exclusion_reason = :reason WHERE id = :id').run({
      id: rater.id,
      excluded: input.excluded ? 1 : 0,
      reason: input.excluded ? input.reason : null,
    });
    recordAudit(
      db,
      { actor, action: input.excluded ? 'rater.exclude' : 'rater.include', targetType: 'rater', targetId: rater.id, details: { batch: input.batchId, reason: input.reason } },
      now,
    );
  }).immediate();
}

/**
 * Deletes one participant's data on request (e.g. a GDPR erasure): their judgments (with the pairs' counters
 * taken back, so the pair is served again), assignments, and the rater row with its provider ids. Their content
 * reports stay, detached from them. The audit entry names only the internal rater id and the counts, never the
 * personal data.
 */
export function deleteRaterData(db: Db, input: { batchId: number; raterId: number; reason: string }, actor: string, now: Date): { judgments: number } {
  return db.transaction(() => {
    const rater = findRater(db, input.batchId, input.raterId);
    const counts = db
      .prepare<{ raterId: number }, { pair_id: number; n: number; left_a: number }>(
        `SELECT pair_id, count(*) AS n, sum(left_side = 'a') AS left_a FROM judgments WHERE rater_id = :raterId GROUP BY pair_id`,
      )
      .all({ raterId: rater.id });
    const takeBack = db.prepare(
      'UPDATE pairs SET accepted = max(0, accepted - :n), accepted_left_a = max(0, accepted_left_a - :leftA) WHERE id = :pairId',
    );
    for (const c of counts) takeBack.run({ pairId: c.pair_id, n: c.n, leftA: c.left_a });
    const judgments = db.prepare('DELETE FROM judgments WHERE rater_id = :raterId').run({ raterId: rater.id }).changes;
    db.prepare('DELETE FROM assignments WHERE rater_id = :raterId').run({ raterId: rater.id });
    db.prepare('UPDATE content_reports SET rater_id = NULL WHERE rater_id = :raterId').run({ raterId: rater.id });
    db.prepare('DELETE FROM raters WHERE id = :raterId').run({ raterId: rater.id });
    recordAudit(
      db,
      { actor, action: 'rater.delete-data', targetType: 'rater', targetId: rater.id, details: { batch: input.batchId, judgments, reason: input.reason } },
      now,
    );
    return { judgments };
  }).immediate();
}

/**
 * Takes a pair out of a batch (e.g. reported content): it is no longer served, live leases on it are voided,
 * and its judgments stay stored but drop out of progress counts (the analysis reads only pairs not removed).
 */
export function removePair(db: Db, input: { batchId: number; pairId: number; reason: string }, actor: string, now: Date): void {
  db.transaction(() => {
    const changed = db
      .prepare('UPDATE pairs SET removed_at = :now, removed_reason = :reason WHERE id = :pairId AND batch_id = :batchId AND removed_at IS NULL')
      .run({ ...input, now: now.toISOString() }).changes;
    if (changed === 0) {
      const exists = db.prepare('SELECT 1 FROM pairs WHERE id = :pairId AND batch_id = :batchId').get(input);
      if (!exists) throw new HttpError(404, 'This batch has no such pair.');
      return;
    }
    db.prepare("UPDATE assignments SET state = 'void' WHERE pair_id = :pairId AND state = 'leased'").run({ pairId: input.pairId });
    recordAudit(db, { actor, action: 'pair.remove', targetType: 'pair', targetId: input.pairId, details: { batch: input.batchId, reason: input.reason } }, now);
  }).immediate();
}

/** Marks a content report as dealt with. */
export function resolveContentReport(db: Db, input: { reportId: number; resolution: string }, actor: string, now: Date): void {
  const changed = db
    .prepare('UPDATE content_reports SET resolved_at = :now, resolution = :resolution WHERE id = :reportId AND resolved_at IS NULL')
    .run({ ...input, now: now.toISOString() }).changes;
  if (changed === 0 && !db.prepare('SELECT 1 FROM content_reports WHERE id = :reportId').get(input)) throw new HttpError(404, 'No such report.');
  if (changed > 0) recordAudit(db, { actor, action: 'report.resolve', targetType: 'content_report', targetId: input.reportId, details: { resolution: input.resolution } }, now);
}
