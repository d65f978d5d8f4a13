import { z } from 'zod';
import { getBatchAnalysis } from '../analysis/analysis-cache.js';
import { renderAnalysisHtml } from '../analysis/report-html.js';
import type { RouteSpec } from '../auth/route-table.js';
import type { ConsoleDeps } from '../console/console-deps.js';
import { idParam } from '../console/console-deps.js';
import { checkExport, EXPORT_FORMATS, ExportError, exportContentType, exportFilename, writeExport } from '../export/export-batch.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';

const flag = z
  .enum(['1', '0', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');

const exportQuerySchema = z.object({
  format: z.enum(EXPORT_FORMATS, { error: `format must be one of ${EXPORT_FORMATS.join(', ')}` }),
  include_excluded: flag,
  include_gold: flag,
  with_provider_ids: flag,
  with_calls: flag,
  majority_only: flag,
  min_margin: z.coerce.number().int().min(1).max(1000).optional(),
});

/**
 * GET /api/batches/:id/export?format=...: streams the export with its content type and a download name; the folder
 * formats come as one zip. Raw provider ids (`with_provider_ids=1`) are for admins only.
 */
export function apiExportRoute(deps: ConsoleDeps): RouteSpec {
  const { db, clock } = deps;
  return {
    method: 'get',
    path: '/batches/:id/export',
    access: 'researcher',
    handler: async (req, res, user) => {
      const batchId = idParam(req);
      const query = parseInput(exportQuerySchema, req.query, 'export request');
      if (query.with_provider_ids && user.role !== 'admin') throw new HttpError(403, 'Raw provider ids are for admins only; leave out with_provider_ids.');
      const input = {
        batch: batchId,
        format: query.format,
        includeExcluded: query.include_excluded,
        includeGold: query.include_gold,
        withProviderIds: query.with_provider_ids,
        withCalls: query.with_calls,
        majorityOnly: query.majority_only,
        minMargin: query.min_margin,
      };
      try {
        checkExport(db, input);
      } catch (error) {
        if (error instanceof ExportError) throw new HttpError(error.status, error.message);
        throw error;
      }
      let analysis = null;
      if (query.format === 'bundle') {
        const report = getBatchAnalysis(db, batchId, { now: clock });
        const html = report ? await renderAnalysisHtml(report) : '';
        analysis = report ? { report: () => report, html: () => html } : null;
      }
      res.type(exportContentType(query.format));
      res.attachment(exportFilename({ id: batchId }, query.format));
      await writeExport(db, input, res, { now: clock, analysis });
    },
  };
}
