import { z } from 'zod';
import type { RouteSpec } from '../auth/route-table.js';
import { recordAudit } from '../audit/audit.queries.js';
import { createEpisodeEvaluation } from '../evaluation/evaluate-run.js';
import { getEvaluation } from '../evaluation/evaluation.queries.js';
import { resolveEndpoint } from '../generation/endpoints.js';
import { getRun } from '../generation/run.queries.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { redirectWithFlash } from '../web/console-page.js';

const evaluateFormSchema = z.object({
  judgeModel: z.string().trim().min(1, 'is required').max(200),
  endpoint: z.preprocess((v) => (v === '' ? undefined : v), z.string().trim().default('default')),
});

/** The run page's "Evaluate" form: an episode evaluation of the run, in the background (same engine as simarena evaluate). */
export function evaluationRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db, clock, config } = deps;
  const supervisor = deps.evaluations;
  return [
    {
      method: 'post',
      path: '/runs/:id/evaluate',
      access: 'admin',
      handler: (req, res, user) => {
        const runId = idParam(req);
        if (!getRun(db, runId)) throw new HttpError(404, 'No run has this id.');
        const form = parseInput(evaluateFormSchema, req.body);
        const endpoint = resolveEndpoint(config, config.env, form.endpoint, form.judgeModel);
        const evaluationId = createEpisodeEvaluation(db, { run: String(runId), judgeModel: form.judgeModel, endpoint, createdBy: user.email }, clock());
        recordAudit(db, { actor: user.email, action: 'evaluation.start', targetType: 'evaluation', targetId: evaluationId }, clock());
        supervisor.start(evaluationId);
        const name = getEvaluation(db, evaluationId)?.name ?? String(evaluationId);
        redirectWithFlash(req, res, `/console/runs/${runId}`, `Evaluation ${name} started with judge ${form.judgeModel}; it runs in the background (continue a stopped one with simarena evaluate --resume ${name}).`);
      },
    },
  ];
}
