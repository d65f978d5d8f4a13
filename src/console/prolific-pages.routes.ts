import type { Request, Response } from 'express';
import { z } from 'zod';
import type { RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import { findProlificStudyId } from '../recruiting/platform-operations.queries.js';
import { formatMinor, formatUtc } from '../recruiting/prolific-plan.js';
import { type SettleResult, settleOnProlific } from '../recruiting/prolific-settle.js';
import { prolificStatus, publishOnProlific, transitionProlificStudy } from '../recruiting/prolific-workflows.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { parseInput } from '../web/validate.js';
import { parsePage } from './pagination.js';
import { requireBatchView } from './batch-pages.routes.js';
import { operationLogOf, orProblem, platformDepsOf } from './platform-pages.js';
import { type ConsoleDeps, idParam } from './console-deps.js';

// Prolific from the console (issue 41): the publish dry run with a typed confirmation, the status panel comparing
// Prolific's counts with simarena's, and the settle page listing what will be approved, returned, reviewed and paid
// before its single button, with the log of what was sent. Both show what is still in flight on Prolific and every
// day-21 deadline (issue 50); a bonus payment whose answer was lost is resent only on an admin's typed confirmation of
// its bulk bonus id. Money moves only on admin routes.

const publishSchema = z.object({ confirm: z.literal('publish', { error: 'type "publish" to confirm' }) });
const settleSchema = z.object({ confirm: z.literal('settle', { error: 'type "settle" to confirm' }) });
const studySchema = z.object({ action: z.enum(['PAUSE', 'START', 'STOP']) });
const confirmUnpaidSchema = z
  .object({ bulkId: z.string().trim().min(1).max(128), confirm: z.string().trim() })
  .refine((v) => v.confirm === v.bulkId, { message: 'type the bulk bonus id to confirm that Prolific did not pay it', path: ['confirm'] });

/** The flash after a settle: what was sent, and each phase that stopped with why. */
function settleFlash({ sent, currency, problems }: SettleResult): string {
  const done = `Sent to Prolific: approved ${sent.approved}, asked to return ${sent.returned}, bonuses paid ${sent.bonusesPaid} (${formatMinor(sent.bonusMinor, currency)}).`;
  return [done, ...problems.map((p) => `Stopped (${p.phase}): ${p.message}`)].join(' ');
}

export function prolificRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db } = deps;
  const workflowDeps = (user: SessionUser) => platformDepsOf(deps, user);
  /** Settles (resending the bonus payment `confirmUnpaid` names, on the admin's word), then shows the settle page. */
  const settleThenShow = async (req: Request, res: Response, user: SessionUser, confirmUnpaid?: string) => {
    const batchId = idParam(req);
    const result = await settleOnProlific(workflowDeps(user), batchId, { dryRun: false, confirmUnpaid });
    redirectWithFlash(req, res, `/console/batches/${batchId}/prolific/settle`, settleFlash(result));
  };
  return [
    {
      method: 'get',
      path: '/batches/:id/prolific',
      access: 'researcher',
      handler: async (req, res, user) => {
        const batch = requireBatchView(deps, req);
        const logPage = parsePage(req.query);
        const studyId = findProlificStudyId(db, batch.id) ?? null;
        const preview = studyId ? null : await orProblem(() => publishOnProlific(workflowDeps(user), batch.id, { dryRun: true }));
        const status = studyId ? await orProblem(() => prolificStatus(workflowDeps(user), batch.id)) : null;
        renderPage(res, 'prolific', { title: `Prolific: ${batch.name}`, batch, studyId, preview, status, ...operationLogOf(db, batch.id, 'prolific', logPage), formatMinor, formatUtc });
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
        const logPage = parsePage(req.query);
        const plan = await orProblem(() => settleOnProlific(workflowDeps(user), batch.id, { dryRun: true }));
        renderPage(res, 'prolific-settle', { title: `Settle payments: ${batch.name}`, batch, plan, ...operationLogOf(db, batch.id, 'prolific', logPage), formatMinor, formatUtc });
      },
    },
    {
      method: 'post',
      path: '/batches/:id/prolific/settle',
      access: 'admin',
      handler: async (req, res, user) => {
        parseInput(settleSchema, req.body, 'settlement');
        await settleThenShow(req, res, user);
      },
    },
    {
      method: 'post',
      path: '/batches/:id/prolific/confirm-unpaid',
      access: 'admin',
      handler: async (req, res, user) => {
        const input = parseInput(confirmUnpaidSchema, req.body, 'confirmation');
        await settleThenShow(req, res, user, input.bulkId);
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
