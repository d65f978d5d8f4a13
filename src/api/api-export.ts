import type { Request, Response } from 'express';
import { z } from 'zod';
import { recordAudit } from '../audit/audit.queries.js';
import type { RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import type { ConsoleDeps } from '../console/console-deps.js';
import { idParam } from '../console/console-deps.js';
import { analysisInWorker, buildExportMeta, EXPORT_FORMATS, ExportError, exportFilename, writeExport } from '../export/export-batch.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';

const flag = z
  .enum(['1', '0', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');

const QUERY_KEYS = ['format', 'include_excluded', 'include_gold', 'with_provider_ids', 'with_calls', 'majority_only', 'min_margin', 'prompt', 'question'] as const;

// Strict: a misspelt parameter (`includeExcluded=1`) is a 400 naming it, never an export with the default silently.
const exportQuerySchema = z.strictObject(
  {
    format: z.enum(EXPORT_FORMATS, { error: `format must be one of ${EXPORT_FORMATS.join(', ')}` }),
    include_excluded: flag,
    include_gold: flag,
    with_provider_ids: flag,
    with_calls: flag,
    majority_only: flag,
    min_margin: z.coerce.number().int().min(1).max(1000).optional(),
    prompt: z.enum(['rater', 'script'], { error: 'prompt must be rater or script' }).optional(),
    /** Issue 16: a question id of the batch (checked against the batch by the export). */
    question: z
      .string()
      .trim()
      .max(32)
      .optional()
      .transform((v) => (v === '' ? undefined : v)),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown parameter ${issue.keys.join(', ')}; the parameters are ${QUERY_KEYS.join(', ')}` : undefined,
  },
);
type ExportQuery = z.infer<typeof exportQuerySchema>;

/** Reads and checks the query; raw provider ids (`with_provider_ids=1`) are for admins only. */
function exportRequest(req: Request, user: SessionUser) {
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
    prompt: query.prompt,
    question: query.question,
  };
  return { batchId, query, input };
}

/** The query in its canonical form (known parameters, flags as 1), for the link from an export to its record. */
function canonicalQuery(query: ExportQuery): string {
  const params = new URLSearchParams({ format: query.format });
  for (const key of ['include_excluded', 'include_gold', 'with_provider_ids', 'with_calls', 'majority_only'] as const) if (query[key]) params.set(key, '1');
  if (query.min_margin !== undefined) params.set('min_margin', String(query.min_margin));
  if (query.prompt !== undefined) params.set('prompt', query.prompt);
  if (query.question !== undefined) params.set('question', query.question);
  return params.toString();
}

/** An export's refusal (bad option, unknown batch) answered as the API's error: without the download's headers. */
function withoutDownloadHeaders(error: unknown, res?: Response): unknown {
  if (!(error instanceof ExportError) || res?.headersSent) return error;
  for (const header of ['Content-Disposition', 'Content-Type', 'Link']) res?.removeHeader(header);
  return error;
}

/**
 * GET /api/batches/:id/export?format=...: streams the export with its content type and a download name; the folder
 * formats come as one zip. The export's provenance record is linked (`Link: rel="describedby"`) and served by
 * exportMetaRoute: a single-file format cannot carry it inside. Every export is kept in the audit log, as the CLI's.
 */
export function apiExportRoute(deps: ConsoleDeps): RouteSpec {
  const { db, clock } = deps;
  return {
    method: 'get',
    path: '/batches/:id/export',
    access: 'researcher',
    handler: async (req, res, user) => {
      const { batchId, query, input } = exportRequest(req, user);
      res.attachment(exportFilename({ id: batchId }, query.format));
      res.set('Link', `</api/batches/${batchId}/export/meta?${canonicalQuery(query)}>; rel="describedby"; type="application/json"`);
      let rows: number | null = null;
      try {
        // writeExport checks the options and the batch itself before writing a byte, so a batch deleted meanwhile
        // is a 404 here; the bundle's analysis is computed in the analysis worker, off this request thread (issue 12).
        rows = (await writeExport(db, input, res, { now: clock, analysisOf: analysisInWorker(db, clock) })).rows;
      } catch (error) {
        throw withoutDownloadHeaders(error, res);
      } finally {
        // Recorded once data went out, complete or not: who took which rows, raw provider ids above all.
        if (res.headersSent) {
          const options = {
            include_excluded: query.include_excluded,
            include_gold: query.include_gold,
            with_provider_ids: query.with_provider_ids,
            with_calls: query.with_calls,
            majority_only: query.majority_only,
            min_margin: query.min_margin ?? null,
            ...(query.question === undefined ? {} : { question: query.question }),
          };
          const via = user.via === 'token' ? 'api' : 'console';
          const details = { format: query.format, rows, complete: rows !== null, via, options };
          recordAudit(db, { actor: user.email, action: 'batch.export', targetType: 'batch', targetId: batchId, details }, clock());
        }
      }
    },
  };
}

/**
 * GET /api/batches/:id/export/meta?format=...: the provenance record of that export (simarena version, prompt
 * versions, batch settings, options): what the CLI writes as `<file>.meta.json`. Same parameters and roles as the
 * export.
 */
export function exportMetaRoute(deps: ConsoleDeps): RouteSpec {
  const { db, clock } = deps;
  return {
    method: 'get',
    path: '/batches/:id/export/meta',
    access: 'researcher',
    handler: (req, res, user) => {
      const { input } = exportRequest(req, user);
      try {
        res.json(buildExportMeta(db, input, { now: clock }));
      } catch (error) {
        throw withoutDownloadHeaders(error);
      }
    },
  };
}
