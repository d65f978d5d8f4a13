import { z } from 'zod';
import type { RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import { findProlificStudyId, listBatchOperations } from '../recruiting/platform-operations.queries.js';
import { formatMinor } from '../recruiting/prolific-plan.js';
import { prolificStatus, publishOnProlific, settleOnProlific, transitionProlificStudy } from '../recruiting/prolific-workflows.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { parseInput } from '../web/validate.js';
import { requireBatchView } from './batch-pages.routes.js';
import { orProblem, platformDepsOf } from './platform-pages.js';
import { type ConsoleDeps, idParam } from './console-deps.js';

// Prolific from the console (issue 41): the publish dry run with a typed confirmation, the status panel comparing
// Prolific's counts with simarena's, and the settle page listing what will be approved, returned, reviewed and paid
// before its single button, with the log of what was sent. Money moves only on admin routes.

const publishSchema = z.object({ confirm: z.literal('publish', { error: 'type "publish" to confirm' }) });
const settleSchema = z.object({ confirm: z.literal('settle', { error: 'type "settle" to confirm' }) });
const studySchema = z.object({ action: z.enum(['PAUSE', 'START', 'STOP']) });

export function prolificRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db } = deps;
  const workflowDeps = (user: SessionUser) => platformDepsOf(deps, user);
  const operationsOf = (batchId: number) => listBatchOperations(db, batchId, 'prolific').reverse();
  return [
    {
      method: 'get',
      path: '/batches/:id/prolific',
      access: 'researcher',
      handler: async (req, res, user) => {
        const batch = requireBatchView(deps, req);
        const studyId = findProlificStudyId(db, batch.id) ?? null;
        const preview = studyId ? null : await orProblem(() => publishOnProlific(workflowDeps(user), batch.id, { dryRun: true }));
        const status = studyId ? await orProblem(() => prolificStatus(workflowDeps(user), batch.id)) : null;
        renderPage(res, 'prolific', { title: `Prolific: ${batch.name}`, batch, studyId, preview, status, operations: operationsOf(batch.id), formatMinor });
      },
    },
    {
      method: 'post',
      path: '/batches/:id/prolific/publish',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        parseInput(publishSchema, req.body, 'publication');
        const result = await publishOnProlific(workflowDeps(user), batchId, { dryRun: false });
        redirectWithFlash(req, res, `/console/batches/${batchId}/prolific`, `Published on Prolific as study ${result.studyId}.`);
      },
    },
    {
      method: 'get',
      path: '/batches/:id/prolific/settle',
      access: 'admin',
      handler: async (req, res, user) => {
        const batch = requireBatchView(deps, req);
        const plan = await orProblem(() => settleOnProlific(workflowDeps(user), batch.id, { dryRun: true }));
        renderPage(res, 'prolific-settle', { title: `Settle payments: ${batch.name}`, batch, plan, operations: operationsOf(batch.id), formatMinor });
      },
    },
    {
      method: 'post',
      path: '/batches/:id/prolific/settle',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        parseInput(settleSchema, req.body, 'settlement');
        const { sent, currency } = await settleOnProlific(workflowDeps(user), batchId, { dryRun: false });
        const flash = `Sent to Prolific: approved ${sent.approved}, screened out ${sent.screenedOut}, asked to return ${sent.returned}, bonuses paid ${sent.bonusesPaid} (${formatMinor(sent.bonusMinor, currency)}).`;
        redirectWithFlash(req, res, `/console/batches/${batchId}/prolific/settle`, flash);
      },
    },
    {
      method: 'post',
      path: '/batches/:id/prolific/study',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        const input = parseInput(studySchema, req.body, 'study action');
        const state = await transitionProlificStudy(workflowDeps(user), batchId, input.action);
        redirectWithFlash(req, res, `/console/batches/${batchId}`, `The Prolific study is ${state}.`);
      },
    },
  ];
}
