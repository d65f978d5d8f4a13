import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { type BatchSettings, batchQuestions, findQuestion, type Question } from '../batches/batch.schema.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import { JsonColumnError } from '../db/json-column.js';
import { cacheStatements, type Db, limitPageCache } from '../db/connection.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { type Scope, findExportBatch, listBatchRuns, listPromptVersions } from './export.queries.js';
import { type ExportFormat, type ExportOptions, ONE_QUESTION_FORMATS } from './export.schema.js';
import { UserFacingError } from '../errors/user-facing-error.js';

/** A request that cannot be served: unknown batch, unwritable path... One line for the CLI, a 4xx for the API. */
export class ExportError extends UserFacingError {}

export type ExportBatch = Omit<BatchRow, 'settings'> & { settings: BatchSettings };

export type ExportMeta = {
  simarena_version: string;
  format: ExportFormat;
  exported_at: string;
  batch: { id: number; public_id: string; name: string; state: string; question_version: number; created_at: string };
  batch_settings: BatchSettings;
  /** Issue 16: the batch's questions in page order (a batch with the single `question` has one, id "natural"). */
  questions: Question[];
  /** The question whose answers the export holds, or null when it holds every question's (rows carry question_id). */
  question: { id: string; text: string } | null;
  prompt_versions: string[];
  runs: { id: number; name: string; kind: string; model: string | null; prompt_version: string | null }[];
  options: {
    include_excluded: boolean;
    include_gold: boolean;
    with_provider_ids: boolean;
    with_calls: boolean;
    majority_only: boolean;
    min_margin: number;
    /** Preferences: which prompt the records carry (rater: what raters saw; script: the SCRIPT generation prompt). */
    prompt: 'rater' | 'script';
  };
};

export type ExportContext = {
  /** The connection to read from: a read-only snapshot of its own when the database is a file. */
  db: Db;
  batch: ExportBatch;
  options: ExportOptions;
  scope: Scope;
  meta: ExportMeta;
};

export function simarenaVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export function resolveBatch(db: Db, batch: string): ExportBatch {
  const row = findExportBatch(db, batch);
  if (!row) throw new ExportError(`no batch with id ${batch}`, 404);
  try {
    return { ...row, settings: readBatchSettings(row) };
  } catch (error) {
    if (error instanceof JsonColumnError) throw new ExportError(`batch ${row.id} has settings this version cannot read`, 409);
    throw error;
  }
}

/**
 * The question an export holds: the one asked for, else the first for the formats of one question, else null (every
 * question). An id the batch does not have is a 400 naming the batch's questions.
 */
export function exportQuestion(batch: ExportBatch, options: Pick<ExportOptions, 'format' | 'question'>): Question | null {
  const questions = batchQuestions(batch.settings);
  if (options.question !== undefined) {
    const found = findQuestion(batch.id, questions, options.question);
    if ('problem' in found) throw new ExportError(found.problem);
    return found.question;
  }
  return ONE_QUESTION_FORMATS.includes(options.format) ? (questions[0] ?? null) : null;
}

export function buildContext(db: Db, options: ExportOptions, now: Date): ExportContext {
  const batch = resolveBatch(db, options.batch);
  const question = exportQuestion(batch, options);
  const runs = listBatchRuns(db, batch.id);
  const meta: ExportMeta = {
    simarena_version: simarenaVersion(),
    format: options.format,
    exported_at: now.toISOString(),
    batch: {
      id: batch.id,
      public_id: batch.public_id,
      name: batch.name,
      state: batch.state,
      question_version: batch.question_version,
      created_at: batch.created_at,
    },
    batch_settings: batch.settings,
    questions: batchQuestions(batch.settings),
    question: question ? { id: question.id, text: question.text } : null,
    prompt_versions: listPromptVersions(db, batch.id),
    runs: runs.map((r) => ({ id: r.id, name: r.name, kind: r.kind, model: r.model, prompt_version: r.prompt_version })),
    options: {
      include_excluded: options.includeExcluded,
      include_gold: options.includeGold,
      with_provider_ids: options.withProviderIds,
      with_calls: options.withCalls,
      majority_only: options.majorityOnly,
      min_margin: options.minMargin,
      prompt: options.prompt,
    },
  };
  return {
    db,
    batch,
    options,
    scope: { batchId: batch.id, includeExcluded: options.includeExcluded ? 1 : 0, includeGold: options.includeGold ? 1 : 0, questionId: question?.id ?? null },
    meta,
  };
}

/**
 * A read connection of the export's own, inside one read transaction: every file of an export sees the same
 * snapshot, and the long-lived iterators never block the app's writes (better-sqlite3 refuses a write on a
 * connection with an open iterator). An in-memory database has no second connection; it is read directly.
 */
export function openSnapshot(db: Db): { db: Db; close: () => void } {
  if (db.memory || db.name === '' || db.name === ':memory:') return { db, close: () => {} };
  // Its statements prepared once, as the app's connections' are (cacheStatements): prepared again for each dialogue,
  // thousands of compiled statements waited for the garbage collector, and their native memory grew the server's
  // RSS by 45 MB through the dialogues of a 1,800-dialogue batch (issue 12).
  const reader = cacheStatements(new Database(db.name, { readonly: true, fileMustExist: true }));
  reader.pragma('busy_timeout = 5000');
  // SQLite's own 2 MB page cache, not the 16 MB better-sqlite3 builds it with: an export reads each page once, in
  // order, and a full cache held 16 MB more of the server's memory through a million judgments' export (issue 12).
  limitPageCache(reader, 2000);
  reader.exec('BEGIN');
  return {
    db: reader,
    close: () => {
      if (!reader.open) return;
      if (reader.inTransaction) reader.exec('COMMIT');
      reader.close();
    },
  };
}
