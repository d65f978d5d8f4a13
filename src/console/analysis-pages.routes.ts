import { awaitBatchAnalysis, type ServedAnalysis } from '../analysis/background-analysis.js';
import { findBatchForAnalysis, resolveAnalysisQuestion, UnknownQuestionError } from '../analysis/batch-judgments.queries.js';
import { selectQuestionReport } from '../analysis/question-reports.js';
import type { Db } from '../db/connection.js';
import { plotQuestionOf, storedPlot } from '../analysis/analysis-plots.queries.js';
import { isPlotName, PLOT_NAMES, type PlotName, renderPlot } from '../analysis/plots.js';
import type { RouteSpec } from '../auth/route-table.js';
import { EXPORT_FORMATS } from '../export/export.schema.js';
import { HttpError } from '../web/http-error.js';
import { analysisView, questionSwitcher } from './analysis-view.js';
import { requireBatchView } from './batch-pages.routes.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { renderPage } from '../web/console-page.js';
import { roleplayOutcomes } from '../analysis/roleplay-outcomes.queries.js';
import { roleplayTables } from '../analysis/roleplay-report.js';

/**
 * The question a request asks for (`?question=ID`, issue 16): undefined when none is asked (the first question), a
 * 400 naming the batch's questions when the batch has no such question, a 404 when there is no batch.
 */
export function requestedQuestion(db: Db, batchId: number, query: unknown): string | undefined {
  const raw = (query as Record<string, unknown> | undefined)?.question;
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw new HttpError(400, 'question must be given once, as a question id.');
  const batch = findBatchForAnalysis(db, batchId);
  if (!batch) throw new HttpError(404, 'No batch has this id.');
  try {
    return resolveAnalysisQuestion(batch, raw).id;
  } catch (error) {
    if (error instanceof UnknownQuestionError) throw new HttpError(400, `${error.message}.`);
    throw error;
  }
}

const NOT_COMPUTED = 'The analysis could not be computed just now. Reload the page in a moment.';

/** A plot drawn on the request thread from the served result's whole report (one question's with `asked`). */
async function drawPlot(served: ServedAnalysis, asked: string | undefined, name: PlotName): Promise<string> {
  const whole = await served.report();
  if (!whole) throw new HttpError(503, NOT_COMPUTED);
  return renderPlot(selectQuestionReport(whole, asked), name);
}

/** The batch's results page: the stored analysis with its age (refreshed in a worker process as data changes), plots, exports. */
export function analysisRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db, clock } = deps;
  return [
    {
      method: 'get',
      path: '/batches/:id/analysis',
      access: 'researcher',
      handler: async (req, res) => {
        const batch = requireBatchView(deps, req);
        const asked = requestedQuestion(db, batch.id, req.query);
        // The last finished analysis, with its age; a newer one is computed in the worker process meanwhile.
        const served = await awaitBatchAnalysis(db, batch.id, { now: clock });
        if (!served) throw new HttpError(404, 'No batch has this id.');
        // The page report (migration 028: the report with its per-rater array cut to the raters the page shows, a few
        // tens of KB where the whole report is 10–14 MB at a million judgments), decompressed on the thread pool and
        // parsed once per stored result, then remembered; the whole report for a row stored without one.
        const page = await served.pageReport();
        if (!page) throw new HttpError(503, NOT_COMPUTED);
        // Several questions (issue 16): one question's results at a time, chosen by ?question=ID (the first by default).
        const report = selectQuestionReport(page, asked);
        renderPage(res, 'analysis', {
          title: `Analysis of ${batch.name}`,
          batch,
          report,
          computedAt: served.computedAt,
          ageSeconds: served.ageSeconds,
          updating: served.updating,
          ...analysisView(report),
          ...questionSwitcher(page, report),
          formats: EXPORT_FORMATS,
          roleplayOutcomes: roleplayOutcomesView(db, batch.id),
        });
      },
    },
    {
      method: 'get',
      path: '/batches/:id/plots/:name',
      access: 'researcher',
      handler: async (req, res) => {
        const batchId = idParam(req);
        const raw = String(req.params.name ?? '').replace(/\.svg$/, '');
        if (!isPlotName(raw)) throw new HttpError(404, `No plot named ${raw}; plots: ${PLOT_NAMES.join(', ')}.`);
        const asked = requestedQuestion(db, batchId, req.query);
        const served = await awaitBatchAnalysis(db, batchId, { now: clock });
        if (!served) throw new HttpError(404, 'No batch has this id.');
        // The page report names the question a plot is stored under; the whole report is read only to draw a plot.
        const page = await served.pageReport();
        if (!page) throw new HttpError(503, NOT_COMPUTED);
        // Drawn by the analysis worker beside the report (migration 026); drawn here only when the stored result has no
        // plots (stored before they were, or by a process without the worker), from the whole report: the page
        // report's raters are cut to those the analysis page shows.
        const stored = served.version === null ? undefined : storedPlot(db, batchId, served.version, plotQuestionOf(selectQuestionReport(page, asked)), raw);
        const svg = stored ?? (await drawPlot(served, asked, raw));
        res.type('image/svg+xml');
        if (req.query.download === '1') res.attachment(`batch-${batchId}-${raw}.svg`);
        res.send(svg);
      },
    },
  ];
}

/** What role-play participants said of a batch's collected dialogues, as the page's tables; null when it has none. */
export function roleplayOutcomesView(db: Db, batchId: number) {
  const outcomes = roleplayOutcomes(db, batchId);
  return outcomes ? { dialogues: outcomes.dialogues, answers: outcomes.answers, tables: roleplayTables(outcomes) } : null;
}
