import { awaitBatchAnalysis } from '../analysis/background-analysis.js';
import { findBatchForAnalysis, resolveAnalysisQuestion, UnknownQuestionError } from '../analysis/batch-judgments.queries.js';
import { selectQuestionReport } from '../analysis/question-reports.js';
import type { Db } from '../db/connection.js';
import { plotQuestionOf, storedPlot } from '../analysis/analysis-plots.queries.js';
import { isPlotName, PLOT_NAMES, renderPlot } from '../analysis/plots.js';
import { paperTables } from '../analysis/paper-report-tables.js';
import type { RouteSpec } from '../auth/route-table.js';
import { EXPORT_FORMATS } from '../export/export.schema.js';
import { HttpError } from '../web/http-error.js';
import { analysisView, questionSwitcher } from './analysis-view.js';
import { requireBatchView } from './batch-pages.routes.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { renderPage } from '../web/console-page.js';

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
        // Decompressed on the thread pool and parsed once per stored result, then remembered.
        const whole = await served.report();
        if (!whole) throw new HttpError(503, 'The analysis could not be computed just now. Reload the page in a moment.');
        // Several questions (issue 16): one question's results at a time, chosen by ?question=ID (the first by default).
        const report = selectQuestionReport(whole, asked);
        renderPage(res, 'analysis', {
          title: `Analysis of ${batch.name}`,
          batch,
          report,
          computedAt: served.computedAt,
          ageSeconds: served.ageSeconds,
          updating: served.updating,
          ...analysisView(report),
          ...questionSwitcher(whole, report),
          paperTables: paperTables(report),
          formats: EXPORT_FORMATS,
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
        const whole = await served.report();
        if (!whole) throw new HttpError(503, 'The analysis could not be computed just now. Reload the page in a moment.');
        const shown = selectQuestionReport(whole, asked);
        // Drawn by the analysis worker beside the report (migration 026); drawn here only when the stored result has no
        // plots (stored before they were, or by a process without the worker).
        const stored = served.version === null ? undefined : storedPlot(db, batchId, served.version, plotQuestionOf(shown), raw);
        const svg = stored ?? (await renderPlot(shown, raw));
        res.type('image/svg+xml');
        if (req.query.download === '1') res.attachment(`batch-${batchId}-${raw}.svg`);
        res.send(svg);
      },
    },
  ];
}
