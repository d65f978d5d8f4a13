import { z } from 'zod';
import { awaitPooledAnalysis } from '../analysis/background-analysis.js';
import type { RouteSpec } from '../auth/route-table.js';
import { listBatches } from '../batches/batch.commands.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import type { ConsoleDeps } from './console-deps.js';
import { renderPage } from '../web/console-page.js';

const pooledQuerySchema = z.object({
  // Checkboxes send one value per batch; a typed URL sends "3,4,5". Both end as one comma list.
  batches: z
    .union([z.string().max(2000), z.array(z.string().max(20)).max(200)])
    .optional()
    .transform((v) => (Array.isArray(v) ? v.join(',') : (v ?? '')))
    .refine((v) => /^(\d+(,\d+)*)?$/.test(v.replace(/\s/g, '')), 'batches must be batch ids separated by commas, e.g. 3,4,5'),
});

export const CONSOLE_POOLED_BOOTSTRAP = 200;

/** Results across rounds: /console/analysis?batches=3,4,5 pools batches; without two of them, a form to choose. */
export function pooledAnalysisRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db, clock } = deps;
  return [
    {
      method: 'get',
      path: '/analysis',
      access: 'researcher',
      handler: async (req, res) => {
        const query = parseInput(pooledQuerySchema, req.query, 'query');
        const ids = [...new Set(query.batches.replace(/\s/g, '').split(',').filter((x) => x !== '').map(Number))];
        const choices = listBatches(db).map((b) => ({ id: b.id, name: b.name, judgments: b.counts.judgments, checked: ids.includes(b.id) }));
        const unknown = ids.find((id) => !choices.some((c) => c.id === id));
        if (unknown !== undefined) throw new HttpError(404, `No batch has the id ${unknown}.`);
        // Computed in the analysis worker process while the server answers other requests (issue 12); the page waits for
        // it: 200 replicates keep it near a second for 30,000 pairs; the CLI defaults to 1,000.
        const report = ids.length >= 2 ? await awaitPooledAnalysis(db, ids, { now: clock(), bootstrap: CONSOLE_POOLED_BOOTSTRAP }) : null;
        renderPage(res, 'pooled-analysis', { title: report ? `Pooled analysis of batches ${ids.join(', ')}` : 'Pool batches', choices, report });
      },
    },
  ];
}
