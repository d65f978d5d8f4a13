import type { Db } from '../db/connection.js';
import type { AnalysisReport } from './analysis-report.js';
import { PLOT_NAMES, type PlotName, renderPlot } from './plots.js';
import { selectQuestionReport } from './question-reports.js';

export type DrawnPlot = { question: string; name: PlotName; svg: string };

/** The question a shown report is of, as plots are stored under it: '' for a batch of one question. */
export const plotQuestionOf = (shown: AnalysisReport): string => shown.question?.id ?? '';

/** Every plot the console can show of this report: each question's five (or the five of a one-question batch). */
export async function drawPlots(report: AnalysisReport): Promise<DrawnPlot[]> {
  const shown = report.questions ? report.questions.map((q) => selectQuestionReport(report, q.id)) : [report];
  const plots: DrawnPlot[] = [];
  for (const one of shown) for (const name of PLOT_NAMES) plots.push({ question: plotQuestionOf(one), name, svg: await renderPlot(one, name) });
  return plots;
}

/** Replaces the batch's stored plots with those of the report of this version (in the caller's transaction). */
export function storePlots(db: Db, batchId: number, version: string, plots: readonly DrawnPlot[]): void {
  db.prepare('DELETE FROM analysis_plots WHERE batch_id = :batchId').run({ batchId });
  const insert = db.prepare('INSERT INTO analysis_plots (batch_id, data_version, question, name, svg) VALUES (:batchId, :version, :question, :name, :svg)');
  for (const plot of plots) insert.run({ batchId, version, ...plot });
}

/** A plot drawn from the report of exactly this version, if one is stored. */
export function storedPlot(db: Db, batchId: number, version: string, question: string, name: PlotName): string | undefined {
  return db
    .prepare<{ batchId: number; version: string; question: string; name: string }, string>(
      'SELECT svg FROM analysis_plots WHERE batch_id = :batchId AND question = :question AND name = :name AND data_version = :version',
    )
    .pluck()
    .get({ batchId, version, question, name });
}
