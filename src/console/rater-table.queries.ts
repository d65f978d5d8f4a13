import type { Db } from '../db/connection.js';
import { JUDGMENTS_ON_REMOVED_PAIRS, PARTICIPANT_COLUMNS, type ParticipantRater } from '../recruiting/participants.queries.js';
import { figuresOfResult } from '../analysis/rater-figures.queries.js';
import { QUALITY_FLAG_RULES, type QualityJudgment } from '../analysis/rater-quality.js';

export type RaterRow = ParticipantRater & {
  /** Raters of this batch from the same client address hash, this one included (1 when alone or unknown). */
  address_share: number;
};

/** Raters listed on the console (preview sessions are not raters of the study). */
export function countBatchRaters(db: Db, batchId: number): number {
  return db.prepare<{ batchId: number }, number>("SELECT count(*) FROM raters WHERE batch_id = :batchId AND provider <> 'preview'").pluck().get({ batchId }) ?? 0;
}

/**
 * One page of a batch's raters in id order. The page starts at the id found by stepping over `offset` entries of the
 * listing index (migration 020), then reads its own rows; the address share is counted once per address hash on the
 * page (MATERIALIZED: otherwise SQLite counts again for every row, 100 × 50,000 index entries when a whole study comes
 * from one address), on the index raters_by_address (migration 002).
 */
export function listBatchRatersPage(db: Db, batchId: number, limit: number, offset: number): RaterRow[] {
  return db
    .prepare<{ batchId: number; limit: number; offset: number }, RaterRow>(
      `WITH page AS (
         SELECT ${PARTICIPANT_COLUMNS}, address_hash FROM raters
         WHERE batch_id = :batchId AND provider <> 'preview'
           AND id >= (SELECT id FROM raters WHERE batch_id = :batchId AND provider <> 'preview' ORDER BY id LIMIT 1 OFFSET :offset)
         ORDER BY id LIMIT :limit),
       shares AS MATERIALIZED (
         SELECT h.address_hash, (SELECT count(*) FROM raters same WHERE same.batch_id = :batchId AND same.address_hash = h.address_hash) AS n
         FROM (SELECT DISTINCT address_hash FROM page WHERE address_hash IS NOT NULL) h)
       SELECT page.id, page.public_id, page.provider, page.participant_id, page.study_id, page.session_id, page.status, page.onboarding_correct,
         page.onboarding_answered, page.attention_failures, page.attention_answered, page.excluded, page.exclusion_reason,
         page.status_before_exclusion, page.created_at, page.last_seen_at, page.finished_at, page.finish_reason, page.regular_judgments,
         coalesce(shares.n, 1) AS address_share
       FROM page LEFT JOIN shares ON shares.address_hash = page.address_hash ORDER BY page.id`,
    )
    .all({ batchId, limit, offset });
}

/** Every rater of a batch (the page's columns): the whole list, for tests and small batches. */
export function listBatchRaters(db: Db, batchId: number): RaterRow[] {
  return listBatchRatersPage(db, batchId, -1, 0);
}

// The "fails checks" flag of qualityFlags (src/analysis/rater-quality.ts) in SQL: a failed attention check, or an
// onboarding score under the batch's threshold (the same double division as in JavaScript).
const FAILS_CHECKS = `(attention_failures > 0 OR (:threshold IS NOT NULL AND onboarding_answered > 0 AND CAST(onboarding_correct AS REAL) / onboarding_answered < :threshold))`;

/**
 * How often the batch's raters were added, removed, or changed status or exclusion (migration 029): what the
 * participants page's counts depend on of the raters' rows, besides the stored figures and the batch's median time.
 */
export function raterDecisionChanges(db: Db, batchId: number): number {
  return db.prepare<{ batchId: number }, number>('SELECT changes FROM batch_rater_counts WHERE batch_id = :batchId').pluck().get({ batchId }) ?? 0;
}

/** How many raters of a batch are on each list decided by their status and checks alone (`quality`: the rest). */
export type DecisionCounts = { approve: number; review: number; reject: number; quality: number };

/**
 * The payment decisions that do not depend on quality figures, counted over the whole batch by one aggregate. The
 * order of the cases is decideParticipant's (src/console/participants-csv.ts); test/console/rater-pages-paged.test.ts
 * compares these counts with the full CSV's decisions for every status, exclusion and failed check. `quality`: completed, included, no failed check — their list
 * depends on the quality flags, decided in code from the stored analysis (listQualityDependentRaters).
 */
export function countDecisionsBeforeQuality(db: Db, batchId: number, onboardingThreshold: number | null): DecisionCounts {
  // Two index-only reads (migration 030): the completed, included raters, whose list depends on their checks and then
  // their figures; everyone else, whose list follows from status and exclusion alone.
  const rows = db
    .prepare<{ batchId: number; threshold: number | null }, { decision: keyof DecisionCounts; n: number }>(
      `SELECT decision, count(*) AS n FROM (
         SELECT CASE
             WHEN status IN ('withdrew', 'no_consent') THEN 'review'
             WHEN excluded = 1 OR status = 'screened_out' THEN 'reject'
             ELSE 'review' END AS decision -- still working: a completed rater here is excluded, rejected above
         FROM raters INDEXED BY raters_not_completed_included
         WHERE batch_id = :batchId AND provider <> 'preview' AND NOT (status = 'completed' AND excluded = 0)
         UNION ALL
         SELECT CASE WHEN ${FAILS_CHECKS} THEN 'review' ELSE 'quality' END
         FROM raters INDEXED BY raters_completed_included
         WHERE batch_id = :batchId AND provider <> 'preview' AND status = 'completed' AND excluded = 0)
       GROUP BY 1`,
    )
    .all({ batchId, threshold: onboardingThreshold });
  const counts: DecisionCounts = { approve: 0, review: 0, reject: 0, quality: 0 };
  for (const r of rows) counts[r.decision] += r.n;
  return counts;
}

/** A completed, included rater with no failed check: what their payment decision still needs. */
export type QualityDependentRater = Pick<ParticipantRater, 'id' | 'finish_reason' | 'regular_judgments' | 'judge'>;

/**
 * Which raters of `:batchId` (as `r`) are counted as `quality` by countDecisionsBeforeQuality: completed, included, no
 * failed attention check, and onboarding passed at `:threshold` (none set: passed).
 */
const QUALITY_DEPENDENT = `r.batch_id = :batchId AND r.provider <> 'preview' AND r.status = 'completed' AND r.excluded = 0 AND r.attention_failures = 0
  AND NOT (:threshold IS NOT NULL AND r.onboarding_answered > 0 AND CAST(r.onboarding_correct AS REAL) / r.onboarding_answered < :threshold)`;

/**
 * The raters counted as `quality` by countDecisionsBeforeQuality, with what decides their list beside the figures,
 * read from the index raters_completed_included alone (migrations 020, 030).
 */
export function listQualityDependentRaters(db: Db, batchId: number, onboardingThreshold: number | null, options: { unnamedOnly?: boolean } = {}): QualityDependentRater[] {
  return db
    .prepare<{ batchId: number; threshold: number | null }, QualityDependentRater>(
      `SELECT r.id, r.finish_reason, r.regular_judged AS regular_judgments, r.judge FROM raters r INDEXED BY raters_completed_included
       WHERE ${QUALITY_DEPENDENT}${options.unnamedOnly ? ' AND r.judge IS NULL' : ''}`,
    )
    .all({ batchId, threshold: onboardingThreshold });
}

/** The `quality` raters of countDecisionsBeforeQuality on each list, counted from the stored figures (`unnamed`: not counted). */
export type QualityDecisionCounts = { approve: number; review: number; pending: number; unnamed: number };

/**
 * The payment decisions of the raters counted as `quality` by countDecisionsBeforeQuality, counted by one aggregate
 * over their stored figures of result `partsId` (analysis_rater_figures, migrations 028 and 032, found by each rater's
 * stored pseudonym through the primary key): the participants page's counts without reading the whole report or a row
 * per rater into JavaScript (at a million judgments the 50,000 raters' rows took 60–85 ms to read, joined to their
 * figures 110–190 ms). The cases are decideParticipant's after its status and checks (src/console/participants-csv.ts),
 * with qualityFlags' "too fast" and "one side" (src/analysis/rater-quality.ts, QUALITY_FLAG_RULES) on the stored figures and `medianSeconds`
 * the batch's median time; test/console/page-parts.test.ts compares these counts with decideParticipant's, case by case
 * and on pages served from the whole report. `unnamed`: raters from before pseudonyms were stored at consent (judge null), decided in code by the caller.
 */
export function countQualityDecisions(db: Db, batchId: number, onboardingThreshold: number | null, partsId: number, medianSeconds: number | null): QualityDecisionCounts {
  const rules = QUALITY_FLAG_RULES;
  const rows = db
    .prepare<
      {
        batchId: number;
        threshold: number | null;
        partsId: number;
        median: number | null;
        fastSeconds: number;
        fastDivisor: number;
        sideDecisive: number;
        sideHigh: number;
        sideLow: number;
      },
      { decision: keyof QualityDecisionCounts; n: number }
    >(
      `WITH removed AS MATERIALIZED (${JUDGMENTS_ON_REMOVED_PAIRS})
       SELECT CASE
           WHEN r.judge IS NULL THEN 'unnamed'
           WHEN f.judge IS NOT NULL AND (
               (f.median_seconds IS NOT NULL AND (f.median_seconds < :fastSeconds OR (:median IS NOT NULL AND f.median_seconds < :median / :fastDivisor)))
               OR (f.left_rate IS NOT NULL AND coalesce(f.decisive, f.judgments) >= :sideDecisive AND (f.left_rate >= :sideHigh OR f.left_rate <= :sideLow))) THEN 'review'
           WHEN f.judge IS NULL AND r.regular_judged - coalesce((SELECT n FROM removed WHERE removed.rater_id = r.id), 0) > 0 THEN 'pending'
           WHEN r.finish_reason IN ('closed', 'paused') THEN 'approve'
           WHEN r.finish_reason IS NOT NULL AND r.regular_judged = 0 THEN 'review'
           ELSE 'approve' END AS decision, count(*) AS n
       -- The raters in pseudonym order (migration 030): their figures are looked up in the figures' own key order.
       FROM raters r INDEXED BY raters_completed_included
         LEFT JOIN analysis_rater_figures f ON f.batch_id = r.batch_id AND f.judge = r.judge AND ${figuresOfResult('f')}
       WHERE ${QUALITY_DEPENDENT}
       GROUP BY 1`,
    )
    .all({
      batchId,
      threshold: onboardingThreshold,
      partsId,
      median: medianSeconds,
      // qualityFlags' own thresholds (better-sqlite3 binds numbers as REAL, so the division is not an integer one).
      fastSeconds: rules.tooFastSeconds,
      fastDivisor: rules.tooFastMedianDivisor,
      sideDecisive: rules.oneSideMinDecisive,
      sideHigh: rules.oneSideHigh,
      sideLow: rules.oneSideLow,
    });
  const counts: QualityDecisionCounts = { approve: 0, review: 0, pending: 0, unnamed: 0 };
  for (const r of rows) counts[r.decision] += r.n;
  return counts;
}

/** Who a rater is, for their `judge` pseudonym: for the raters whose pseudonym is not known yet. */
export function listRaterIdentities(db: Db, raterIds: number[]): Pick<ParticipantRater, 'id' | 'provider' | 'participant_id' | 'public_id'>[] {
  return db
    .prepare<{ ids: string }, Pick<ParticipantRater, 'id' | 'provider' | 'participant_id' | 'public_id'>>(
      'SELECT id, provider, participant_id, public_id FROM raters WHERE id IN (SELECT value FROM json_each(:ids))',
    )
    .all({ ids: JSON.stringify(raterIds) });
}

/**
 * Regular (non-gold) judgments of a batch on pairs still in it, for the rater quality figures: the first question's
 * (one per answered comparison), as attention checks are; a batch's later questions are analysed per question. Every
 * judgment of the batch: for tests and tools, never a console page (the pages read the stored analysis, issue 12).
 */
export function listQualityJudgments(db: Db, batchId: number): QualityJudgment[] {
  return db
    .prepare<{ batchId: number }, QualityJudgment>(
      `SELECT j.rater_id, j.pair_id, j.label, j.choice, j.active_ms FROM judgments j JOIN pairs p ON p.id = j.pair_id
       WHERE j.batch_id = :batchId AND j.question_index = 0 AND j.is_gold = 0 AND p.removed_at IS NULL`,
    )
    .all({ batchId });
}

export type ContentReportRow = {
  id: number;
  batch_id: number;
  batch_name: string;
  pair_id: number;
  pair_removed_at: string | null;
  dialogue_id: number | null;
  reason: string;
  created_at: string;
  resolved_at: string | null;
  resolution: string | null;
};

export function listContentReports(db: Db, filter: { batchId?: number; open?: boolean }, limit: number, offset: number): ContentReportRow[] {
  return db
    .prepare<{ batchId: number | null; open: number; limit: number; offset: number }, ContentReportRow>(
      `SELECT cr.id, cr.batch_id, b.name AS batch_name, cr.pair_id, p.removed_at AS pair_removed_at, cr.dialogue_id, cr.reason,
         cr.created_at, cr.resolved_at, cr.resolution
       FROM content_reports cr JOIN batches b ON b.id = cr.batch_id JOIN pairs p ON p.id = cr.pair_id
       WHERE (:batchId IS NULL OR cr.batch_id = :batchId) AND (:open = 0 OR cr.resolved_at IS NULL)
       ORDER BY cr.resolved_at IS NOT NULL, cr.id DESC LIMIT :limit OFFSET :offset`,
    )
    .all({ batchId: filter.batchId ?? null, open: filter.open ? 1 : 0, limit, offset });
}
