import type { AnalysisReport } from '../analysis/analysis-report.js';
import type { RaterFiguresRow } from '../analysis/page-report.js';
import { judgePseudonym } from '../rating/judge-pseudonym.js';
import type { RaterQualityRow } from '../analysis/rater-quality.js';
import type { Db } from '../db/connection.js';
import { getBatchRow } from '../batches/batch.queries.js';
import type { ParticipantRater } from './participants.queries.js';

// The console's rater figures come from the batch's stored analysis (computed by the analysis worker, issue 12), not
// from the batch's judgments on the request thread: report.raters holds each rater's first-question figures under
// their `judge` pseudonym, computed by the same rule (src/analysis/rater-quality.ts), and the worker stores them as
// rows beside the report (analysis_rater_figures, migration 028), which the pages read a page of raters at a time.

/** A rater's quality figures as the console shows them (seconds, shares). */
export type StoredRaterQuality = Omit<RaterQualityRow, 'raterId'>;

/**
 * Why a rater's row has quality figures or not. `known`: in the stored analysis. `left-out`: excluded or screened
 * out, so the analysis leaves them out. `pending`: they have judgments the stored analysis does not hold yet (or
 * none is stored yet). `none`: no judgment the analysis would count.
 */
export type QualityState = 'known' | 'left-out' | 'pending' | 'none';

export function qualityStateOf(
  rater: Pick<ParticipantRater, 'excluded' | 'status'>,
  analysedJudgments: number,
  stored: StoredRaterQuality | undefined,
): QualityState {
  if (stored) return 'known';
  if (rater.excluded === 1 || rater.status === 'screened_out') return 'left-out';
  return analysedJudgments > 0 ? 'pending' : 'none';
}

/** The report's per-rater figures by `judge` pseudonym. */
export function qualityByJudge(report: AnalysisReport): Map<string, StoredRaterQuality> {
  return new Map(
    report.raters.map((r) => [r.rater, { judgments: r.judgments, decisive: r.decisive ?? null, medianSeconds: r.median_seconds, majorityAgreement: r.loo_agreement, leftRate: r.left_rate }]),
  );
}

/** A rater's stored figures (analysis_rater_figures, migration 028) as the console shows them. */
export function qualityOfFigures(row: Pick<RaterFiguresRow, 'judgments' | 'median_seconds' | 'majority_agreement' | 'left_rate' | 'decisive'>): StoredRaterQuality {
  return { judgments: row.judgments, decisive: row.decisive ?? null, medianSeconds: row.median_seconds, majorityAgreement: row.majority_agreement, leftRate: row.left_rate };
}

/**
 * Lookups kept for the life of an app (they belong to its routes, not to the module): the figures by pseudonym, built
 * once per stored report (a stored report is parsed once and served as the same object until a newer one is stored);
 * and the pseudonym of each rater from before it was stored at consent (migration 023), computed once per rater (an
 * HMAC: 50,000 of them take about 0.1 s).
 */
export function createRaterQualityLookup(db: Db) {
  const byReport = new WeakMap<AnalysisReport, Map<string, StoredRaterQuality>>();
  const judges = new Map<number, { salt: string; names: Map<number, string> }>();
  return {
    /** The figures of the stored report by pseudonym (an empty map when no report is stored yet). */
    figures(report: AnalysisReport | null): Map<string, StoredRaterQuality> {
      if (!report) return new Map();
      let figures = byReport.get(report);
      if (!figures) byReport.set(report, (figures = qualityByJudge(report)));
      return figures;
    },
    /** The `judge` pseudonyms of the batch's raters, as the exports and the analysis name them (issue 10). */
    judgeNames(batchId: number) {
      const salt = getBatchRow(db, batchId)?.judge_salt ?? '';
      let known = judges.get(batchId);
      if (!known || known.salt !== salt) judges.set(batchId, (known = { salt, names: new Map() }));
      const names = known.names;
      return {
        /** The rater's pseudonym, computed on first use. */
        of(r: Pick<ParticipantRater, 'id' | 'provider' | 'participant_id' | 'public_id'> & { judge?: string | null }): string {
          if (r.judge) return r.judge;
          let name = names.get(r.id);
          if (name === undefined) {
            name = judgePseudonym(salt, { provider: r.provider, participantId: r.participant_id, raterPublicId: r.public_id });
            names.set(r.id, name);
          }
          return name;
        },
        /** The pseudonym if already computed. */
        known: (raterId: number): string | undefined => names.get(raterId),
      };
    },
    /** Forgets a deleted rater's pseudonym. */
    forget(batchId: number, raterId: number): void {
      judges.get(batchId)?.names.delete(raterId);
    },
  };
}

export type RaterQualityLookup = ReturnType<typeof createRaterQualityLookup>;
