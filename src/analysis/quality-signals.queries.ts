import { z } from 'zod';
import { DEFAULT_QUALITY, exclusionGroundsSchema, type QualitySettings, qualitySettingsSchema, type SignalFlagName } from '../batches/batch.schema.js';
import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import type { RaterFlag } from './analysis-report.js';
import { copiedFromPage, normaliseReason, raterSignals, type RaterSignals, type SignalFlag, signalFlagRule, signalFlags, type SignalJudgment, sharedReasons } from './quality-signals.js';

/** A batch's first-question judgments of regular pairs still in it, with the page's checked figures (migration 035). */
function readSignalJudgments(db: Db, batchId: number): (SignalJudgment & { pair_id: number; dialogue_a_id: number; dialogue_b_id: number })[] {
  return db
    .prepare<{ b: number }, SignalJudgment & { pair_id: number; dialogue_a_id: number; dialogue_b_id: number }>(
      `SELECT j.rater_id, j.pair_id, p.dialogue_a_id, p.dialogue_b_id,
         coalesce(j.active_ms, CAST((julianday(j.submitted_at) - julianday(j.shown_at)) * 86400000 AS INTEGER)) AS active_ms,
         da.words + db.words AS words, j.reason, s.telemetry, s.reason_chars, s.pasted_chars, s.keystrokes, s.typing_ms, s.answered_before_second, s.answer_key
       FROM judgments j JOIN pairs p ON p.id = j.pair_id
         JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id
         LEFT JOIN answer_signals s ON s.assignment_id = j.assignment_id
       WHERE j.batch_id = :b AND j.question_index = 0 AND j.is_gold = 0 AND p.removed_at IS NULL
       ORDER BY j.id`,
    )
    .all({ b: batchId });
}

export type BatchSignals = { byRater: Map<number, RaterSignals>; flagsOf: (raterId: number) => SignalFlag[] };

/**
 * Every rater's signals in a batch, the cross-rater ones (near-identical reasons, reasons copied from the page) over the
 * whole batch. Reads every first-question judgment of the batch and the text of the pairs whose reasons are long
 * enough to compare.
 */
export function readBatchSignals(db: Db, batchId: number, q: QualitySettings): BatchSignals {
  const rows = readSignalJudgments(db, batchId);
  const withReason = rows.map((r, k) => ({ k, rater: r.rater_id, text: r.reason ?? '' })).filter((r) => normaliseReason(r.text).length >= q.minReasonChars);
  const shared = new Array<boolean>(rows.length).fill(false);
  sharedReasons(withReason, q).forEach((same, i) => {
    if (same) shared[(withReason[i] as { k: number }).k] = true;
  });
  const pageText = db.prepare<{ a: number; b: number }, string>("SELECT coalesce(group_concat(text, ' '), '') FROM turns WHERE dialogue_id IN (:a, :b)").pluck();
  const textOfPair = new Map<number, string>();
  const copied = new Array<boolean>(rows.length).fill(false);
  for (const { k } of withReason) {
    const r = rows[k] as (typeof rows)[number];
    let text = textOfPair.get(r.pair_id);
    if (text === undefined) textOfPair.set(r.pair_id, (text = pageText.get({ a: r.dialogue_a_id, b: r.dialogue_b_id }) ?? ''));
    copied[k] = copiedFromPage(r.reason, text, q.minReasonChars);
  }
  const byRater = raterSignals(rows, shared, copied, q);
  return { byRater, flagsOf: (raterId) => signalFlags(byRater.get(raterId), q) };
}

/** One answered assignment's page figures, for the judgments export (null columns when the page sent none). */
export type ExportSignals = {
  telemetry: string | null;
  reason_chars: number | null;
  paste_events: number | null;
  pasted_chars: number | null;
  keystrokes: number | null;
  typing_ms: number | null;
  hidden_ms: number | null;
  answered_before_second: number | null;
};

/** The page figures of a batch's answered assignments, by assignment id. */
export function readExportSignals(db: Db, batchId: number): Map<number, ExportSignals> {
  const rows = db
    .prepare<{ b: number }, ExportSignals & { assignment_id: number }>(
      `SELECT assignment_id, telemetry, reason_chars, paste_events, pasted_chars, keystrokes, typing_ms, hidden_ms, answered_before_second
       FROM answer_signals WHERE batch_id = :b`,
    )
    .all({ b: batchId });
  return new Map(rows.map(({ assignment_id, ...rest }) => [assignment_id, rest]));
}

const signalSettings = z.looseObject({ quality: qualitySettingsSchema.default(DEFAULT_QUALITY), exclusionGrounds: exclusionGroundsSchema });
type SignalSettings = { quality: QualitySettings; exclusionGrounds: SignalFlagName[] };

/** The settings the quality signals read (their defaults when the settings are unreadable; they are validated on write). */
function readSignalSettings(db: Db, batchId: number): SignalSettings {
  const fallback = signalSettings.parse({});
  const text = db.prepare<{ b: number }, string>('SELECT settings FROM batches WHERE id = :b').pluck().get({ b: batchId });
  if (text === undefined) return fallback;
  try {
    return parseJsonColumn(signalSettings, text, `batches.settings of batch ${batchId}`);
  } catch {
    return fallback;
  }
}

/** A batch's quality thresholds. */
export function readQualitySettings(db: Db, batchId: number): QualitySettings {
  return readSignalSettings(db, batchId).quality;
}

/**
 * Every rater's quality-signal flags in a batch (by rater id; raters without any are left out), each with the rule
 * behind it and whether the batch declares it grounds for exclusion; those grounds; and every rater's signal counts
 * (`signals`, stored beside the result for the console's pages: src/analysis/rater-signals.queries.ts).
 */
export function readRaterSignalFlags(db: Db, batchId: number): { grounds: SignalFlagName[]; byRater: Map<number, RaterFlag[]>; signals: Map<number, RaterSignals> } {
  const { quality, exclusionGrounds: grounds } = readSignalSettings(db, batchId);
  const signals = readBatchSignals(db, batchId, quality);
  const byRater = new Map<number, RaterFlag[]>();
  for (const id of signals.byRater.keys()) {
    const flags = signals.flagsOf(id).map((flag) => ({ flag, rule: signalFlagRule(flag, quality), exclusion_ground: grounds.includes(flag) }));
    if (flags.length > 0) byRater.set(id, flags);
  }
  return { grounds, byRater, signals: signals.byRater };
}
