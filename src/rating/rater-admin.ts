import { recordAudit } from '../audit/audit.queries.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { endExcludedSession, type RaterStatus, recountRaterJudgments, releaseReservations, uncountRaterJudgments } from './rating.queries.js';
import { recordExclusionAfterLooks } from './sequential.queries.js';

// Admin writes on raters and their data, requested from the console. Nothing here recomputes statistics: the
// analysis is cached under a data version that changes with judgments and exclusions, so the next read recomputes.

type RaterRef = {
  id: number;
  batch_id: number;
  excluded: number;
  provider: string;
  status: RaterStatus;
  exclusion_reason: string | null;
  status_before_exclusion: RaterStatus | null;
};

function findRater(db: Db, batchId: number, raterId: number): RaterRef {
  const rater = db
    .prepare<{ batchId: number; raterId: number }, RaterRef>(
      `SELECT id, batch_id, excluded, provider, status, exclusion_reason, status_before_exclusion
       FROM raters WHERE id = :raterId AND batch_id = :batchId`,
    )
    .get({ batchId, raterId });
  if (!rater) throw new UserFacingError('This batch has no such rater.', 404);
  return rater;
}

/**
 * Whether a rater's regular judgments are valid, i.e. count toward their pairs' K: neither excluded nor screened
 * out, as the analysis (src/analysis/batch-judgments.queries.ts) and the exports read them.
 */
function judgmentsCount(rater: Pick<RaterRef, 'excluded' | 'status'>): boolean {
  return rater.excluded === 0 && rater.status !== 'screened_out';
}

const IN_PROGRESS: readonly RaterStatus[] = ['consent', 'instructions', 'onboarding', 'rating'];

/**
 * Why a rater cannot be included again, or null when they can: someone who withdrew (or declined consent) asked for
 * their answers not to be used, and a rater screened out by the onboarding or attention checks stays out (the
 * analysis and exports leave every screened-out rater out).
 */
export function inclusionRefusal(rater: { excluded: number; status: string; status_before_exclusion: string | null; exclusion_reason: string | null }): string | null {
  if (rater.excluded === 0) return 'This rater is not excluded.';
  if (rater.status === 'withdrew' || rater.status === 'no_consent') return 'This rater withdrew from the study: their answers are not used, so they cannot be included again.';
  if (rater.status === 'screened_out' && rater.status_before_exclusion === null) {
    return `This rater was screened out by the ${rater.exclusion_reason === 'attention' ? 'attention checks' : rater.exclusion_reason === 'onboarding' ? 'onboarding' : 'checks'}; their answers stay out of the data.`;
  }
  return null;
}

/**
 * Excludes a rater from every statistic and export of the batch (or re-includes them), with the reason kept
 * (issue 10, "exclusion takes effect"):
 * - excluding takes their regular judgments out of the pair counters at once, so those pairs are served to other
 *   raters until they have K valid judgments; a rater still in the study is ended with the screened-out outcome
 *   (their live lease is voided, their reserved pairs are released, a late answer is refused, the next page they
 *   ask for is the screened-out page);
 * - re-including puts their judgments back in the counters and restores the step they were at. A pair refilled in
 *   between then holds K + 1 valid judgments; all are used by the analysis, none is deleted or counted twice, and the
 *   pair is not served again.
 */
export function setRaterExcluded(
  db: Db,
  input: { batchId: number; raterId: number; excluded: boolean; reason: string },
  actor: string,
  now: Date,
): void {
  db.transaction(() => {
    const rater = findRater(db, input.batchId, input.raterId);
    let judgments = 0;
    if (input.excluded) {
      if (rater.excluded === 1) throw new UserFacingError('This rater is already excluded.', 409);
      if (judgmentsCount(rater)) {
        uncountRaterJudgments(db, rater.id);
        // Looks already taken with their judgments stand as taken; only later looks leave them out (issue 51).
        recordExclusionAfterLooks(db, rater.id, 'exclude', input.reason, now);
      }
      db.prepare('UPDATE raters SET excluded = 1, exclusion_reason = :reason WHERE id = :id').run({ id: rater.id, reason: input.reason });
      if (IN_PROGRESS.includes(rater.status)) endExcludedSession(db, rater.id, rater.status, now);
      // The pairs promised to them at consent go back to the pool at once, so other raters can fill them.
      releaseReservations(db, rater.id);
    } else {
      const refusal = inclusionRefusal(rater);
      if (refusal) throw new UserFacingError(refusal, 409);
      db.prepare(
        `UPDATE raters SET excluded = 0, exclusion_reason = NULL, status = coalesce(status_before_exclusion, status),
           finished_at = CASE WHEN status_before_exclusion IS NULL THEN finished_at END, status_before_exclusion = NULL
         WHERE id = :id`,
      ).run({ id: rater.id });
      judgments = recountRaterJudgments(db, rater.id);
      recordExclusionAfterLooks(db, rater.id, 'include', input.reason, now);
    }
    recordAudit(
      db,
      {
        actor,
        action: input.excluded ? 'rater.exclude' : 'rater.include',
        targetType: 'rater',
        targetId: rater.id,
        details: { batch: input.batchId, reason: input.reason, ...(input.excluded ? {} : { judgmentsRestored: judgments }) },
      },
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
    // Regular judgments of an excluded or screened-out rater were taken out of the counters already. An answered
    // comparison counted once, by its first-question row, whatever the number of questions (migration 013).
    const counts = db
      .prepare<{ raterId: number; valid: number }, { pair_id: number; n: number; left_a: number }>(
        `SELECT j.pair_id, count(*) AS n, sum(j.left_side = 'a') AS left_a FROM judgments j JOIN pairs p ON p.id = j.pair_id
         WHERE j.rater_id = :raterId AND j.question_index = 0 AND (p.kind <> 'regular' OR :valid = 1) GROUP BY j.pair_id`,
      )
      .all({ raterId: rater.id, valid: judgmentsCount(rater) ? 1 : 0 });
    const takeBack = db.prepare(
      'UPDATE pairs SET accepted = max(0, accepted - :n), accepted_left_a = max(0, accepted_left_a - :leftA) WHERE id = :pairId',
    );
    for (const c of counts) takeBack.run({ pairId: c.pair_id, n: c.n, leftA: c.left_a });
    // Reported as answered comparisons (first-question rows); every question's row goes.
    const judgments = db.prepare('SELECT count(*) FROM judgments WHERE rater_id = :raterId AND question_index = 0').pluck().get({ raterId: rater.id }) as number;
    db.prepare('DELETE FROM judgments WHERE rater_id = :raterId').run({ raterId: rater.id });
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
      if (!exists) throw new UserFacingError('This batch has no such pair.', 404);
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
  if (changed === 0 && !db.prepare('SELECT 1 FROM content_reports WHERE id = :reportId').get(input)) throw new UserFacingError('No such report.', 404);
  if (changed > 0) recordAudit(db, { actor, action: 'report.resolve', targetType: 'content_report', targetId: input.reportId, details: { resolution: input.resolution } }, now);
}
