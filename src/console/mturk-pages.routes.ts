import { z } from 'zod';
import type { RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import { listBatchPlatformLinks } from '../recruiting/platform-operations.queries.js';
import { formatMinor } from '../recruiting/prolific-plan.js';
import { describeMturkPlan, expireMturkHits, mturkStatus, publishOnMturk, settleOnMturk } from '../recruiting/mturk-workflows.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { parseInput } from '../web/validate.js';
import { parsePage } from './pagination.js';
import { requireBatchView } from './batch-pages.routes.js';
import { operationLogOf, orProblem, platformDepsOf } from './platform-pages.js';
import { type ConsoleDeps, idParam } from './console-deps.js';

// MTurk from the console (issue 41): one page with the publish dry run and its typed confirmation, the status panel
// comparing MTurk's counts with simarena's, what settling will approve, leave for review and pay before its single
// button, and the log of what was sent. Money moves only on admin routes.

const publishSchema = z.object({ confirm: z.literal('publish', { error: 'type "publish" to confirm' }), sandbox: z.literal('on').optional() });
const settleSchema = z.object({ confirm: z.literal('settle', { error: 'type "settle" to confirm' }) });

export function mturkRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db } = deps;
  const workflowDeps = (user: SessionUser) => platformDepsOf(deps, user);
  const page = '/console/batches/:id/mturk';
  const back = (batchId: number) => page.replace(':id', String(batchId));
  return [
    {
      method: 'get',
      path: '/batches/:id/mturk',
      access: 'researcher',
      handler: async (req, res, user) => {
        const batch = requireBatchView(deps, req);
        const logPage = parsePage(req.query);
        const published = listBatchPlatformLinks(db, batch.id, 'mturk').some((l) => l.kind === 'hit');
        const preview = published ? null : await orProblem(() => publishOnMturk(workflowDeps(user), batch.id, { dryRun: true }));
        const status = published ? await orProblem(() => mturkStatus(workflowDeps(user), batch.id)) : null;
        const settle = published && user.role === 'admin' ? await orProblem(() => settleOnMturk(workflowDeps(user), batch.id, { dryRun: true })) : null;
        renderPage(res, 'mturk', { title: `MTurk: ${batch.name}`, batch, preview, status, settle, settleLines: settle?.value ? describeMturkPlan(settle.value.plan) : [], ...operationLogOf(db, batch.id, 'mturk', logPage), formatMinor, platformLabel: 'MTurk' });
      },
    },
    {
      method: 'post',
      path: '/batches/:id/mturk/publish',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        const input = parseInput(publishSchema, req.body, 'publication');
        const result = await publishOnMturk(workflowDeps(user), batchId, { dryRun: false, sandbox: input.sandbox === 'on' ? true : undefined });
        redirectWithFlash(req, res, back(batchId), `Published on MTurk${result.sandbox ? ' (sandbox)' : ''}: HIT ${result.hitIds.join(', ')}.`);
      },
    },
    {
      method: 'post',
      path: '/batches/:id/mturk/settle',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        parseInput(settleSchema, req.body, 'settlement');
        const { sent, held } = await settleOnMturk(workflowDeps(user), batchId, { dryRun: false });
        const waiting = held.length > 0 ? ` ${held.length} bonus(es) held: MTurk refused them again as already sent but does not list them yet; settle again later.` : '';
        redirectWithFlash(req, res, back(batchId), `Sent to MTurk: approved ${sent.approved}, bonuses paid ${sent.bonusesPaid} (${formatMinor(sent.bonusMinor, 'USD')}).${waiting}`);
      },
    },
    {
      method: 'post',
      path: '/batches/:id/mturk/expire',
      access: 'admin',
      handler: async (req, res, user) => {
        const batchId = idParam(req);
        const n = await expireMturkHits(workflowDeps(user), batchId);
        redirectWithFlash(req, res, `/console/batches/${batchId}`, `Expired ${n} MTurk HIT(s): no new worker can accept them.`);
      },
    },
  ];
}
