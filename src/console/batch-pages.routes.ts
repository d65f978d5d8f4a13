import { z } from 'zod';
import { sequentialLines, summariseComparison } from '../analysis/sequential-report.js';
import { listComparisonStops, listLooks } from '../rating/sequential.queries.js';
import type { Request, Response } from 'express';
import { cloneBatch, FROZEN_KEYS, getBatch, transitionBatch, updateBatchSettings, type BatchView } from '../batches/batch.commands.js';
import { CONTEXTS, DEFAULT_QUESTION, PROVIDER_KINDS } from '../batches/batch.schema.js';
import { type CapacityResult, checkBatchCapacity } from '../batches/batch-capacity.js';
import { createBatch, previewPairs } from '../batches/create-batch.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, payPerHour } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import { consentTimeOfFullSession, createWordsMemo } from '../rating/consent-time.queries.js';
import { previewUrl } from '../rating/rater-token.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { STATE_EXPLANATIONS } from './batch-actions.js';
import { type BatchFormValues, conditionsMissingFromRuns, formToSettings, MORE_QUESTION_ROWS, readBatchForm, settingsToForm } from './batch-form.js';
import { listBlockChoices, listRunChoices } from './batch-form.queries.js';
import { formPlanLines } from './batch-plan.js';
import { batchProgress, countBatches, listBatchesWithProgress } from './batch-progress.queries.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { batchActions } from './lifecycle-actions.js';
import { batchFormErrors } from './batch-form-errors.js';
import { parsePage } from './pagination.js';

const newBatchQuerySchema = z.object({ run: z.string().trim().max(200).optional() });
const closeFormSchema = z.object({ confirm: z.literal('close', { error: 'type "close" to confirm; the batch was not closed' }) });
const cloneFormSchema = z.object({ blockParticipants: z.enum(['on', '1', 'true']).optional().transform((v) => v !== undefined) });

export function requireBatchView(deps: ConsoleDeps, req: Request): BatchView {
  const batch = getBatch(deps.db, idParam(req));
  if (!batch) throw new HttpError(404, 'No batch has this id.');
  return batch;
}

const FIELD_ERRORS_SUMMARY = 'Nothing was saved: see the messages by the fields below.';

const formOptions = {
  contexts: CONTEXTS,
  providers: PROVIDER_KINDS,
  reasons: ['off', 'optional', 'required'],
  defaultQuestion: DEFAULT_QUESTION,
  moreQuestionRows: MORE_QUESTION_ROWS,
};

/** Batches: list, create (with a preview of the pairs), detail with live progress, lifecycle, edit and clone. */
export function batchRoutes(deps: ConsoleDeps): RouteSpec[] {
  const { db, clock, config } = deps;
  // Words per comparison, counted once per batch while its pairs stay the same (every turn of a batch of a million
  // judgments took 0.3 s, counted twice a page).
  const wordsMemo = createWordsMemo();

  /**
   * The launch checklist with the time promised at consent now and the configured pay floor; the batch page passes the
   * time and capacity it shows (each reads every regular pair of the batch: 30 ms at 20,000 pairs).
   */
  const checklistOf = (batch: BatchView, shown?: { minutes: number; capacity: CapacityResult }) =>
    batchLaunchChecklist(
      db,
      batch.id,
      { minutes: shown?.minutes ?? consentTimeOfFullSession(db, batch.id, batch.settings, wordsMemo).minutes, minPayPerHour: config.minPayPerHour, publicUrl: config.publicUrl },
      shown?.capacity,
    );

  const renderBatchPage = (res: Response, batch: BatchView, error?: string) => {
    const consentTime = consentTimeOfFullSession(db, batch.id, batch.settings, wordsMemo);
    const capacity = checkBatchCapacity(db, batch.id);
    const checklist = checklistOf(batch, { minutes: consentTime.minutes, capacity });
    renderPage(res, 'batch', {
      title: batch.name,
      batch,
      progress: batchProgress(db, batch.id, clock()),
      links: raterLinks(batch, config.publicUrl),
      previewUrl: previewUrl(config.publicUrl, deps.sessionSecret, batch.publicId),
      explanation: STATE_EXPLANATIONS[batch.state],
      actions: batchActions(batch.state),
      explanations: STATE_EXPLANATIONS,
      frozen: batch.counts.judgments > 0 ? FROZEN_KEYS : [],
      settingsJson: JSON.stringify(batch.settings, null, 2),
      capacity,
      checklist,
      launchBlocked: blockingFailures(checklist).length > 0,
      consentTime,
      payRate: payPerHour(batch.settings.pay, consentTime.minutes),
      minPayPerHour: config.minPayPerHour,
      sequential: sequentialNotice(batch),
      error,
    });
  };

  /** A sequential batch's notice (issue 44): where each comparison stands, and whether the batch closed itself. */
  const sequentialNotice = (batch: BatchView): { closedItself: boolean; lines: string[] } | null => {
    if (!batch.settings.stopping) return null;
    const stops = listComparisonStops(db, batch.id);
    const closedItself = batch.state === 'closed' && stops.length > 0 && stops.every((c) => c.stopped_at !== null);
    return { closedItself, lines: stops.flatMap((c) => sequentialLines(summariseComparison(c, listLooks(db, c.id)))) };
  };

  const renderForm = (res: Response, values: Record<string, unknown> & { form: BatchFormValues }) => {
    const runChoices = listRunChoices(db);
    renderPage(res, 'batch-form', {
      ...formOptions,
      runChoices,
      conditionCheck: conditionsMissingFromRuns(values.form, runChoices),
      blockChoices: listBlockChoices(db, (values.batch as BatchView | undefined)?.id ?? null),
      preview: null,
      error: null,
      errors: {},
      frozen: [],
      plan: formPlanLines(values.form),
      ...values,
    });
  };

  const editableBatch = (req: Request, user: SessionUser) => {
    const batch = requireBatchView(deps, req);
    return { batch, frozen: batch.counts.judgments > 0 ? [...FROZEN_KEYS] : [], actor: user.email };
  };

  return [
    {
      method: 'get',
      path: '/batches',
      access: 'researcher',
      handler: (req, res) => {
        const page = parsePage(req.query);
        const total = countBatches(db);
        renderPage(res, 'batches', { title: 'Batches', batches: listBatchesWithProgress(db, page.perPage, page.offset), page, total });
      },
    },
    {
      method: 'get',
      path: '/batches/new',
      access: 'admin',
      handler: (req, res) => {
        const query = parseInput(newBatchQuerySchema, req.query, 'query');
        const runChoices = listRunChoices(db);
        const run = runChoices.find((r) => r.name === query.run || String(r.id) === query.run);
        const conditions = run?.conditions ?? [];
        const first: [string, string] | null = conditions.length >= 2 ? [conditions[0] ?? '', conditions[1] ?? ''] : null;
        const form: BatchFormValues = settingsToForm({
          name: run && first ? `${run.name}: ${first.join(' vs ')}` : '',
          runs: run ? [run.name] : [],
          comparisons: first ? [first] : [],
        });
        renderForm(res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new' });
      },
    },
    {
      method: 'post',
      path: '/batches/new',
      access: 'admin',
      handler: (req, res, user) => {
        const body = req.body as Record<string, unknown>;
        const form = readBatchForm(body);
        const settings = formToSettings(form);
        const errors = batchFormErrors(settings);
        if (errors) {
          res.status(400);
          renderForm(res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
          return;
        }
        try {
          if (body.intent === 'preview') {
            const preview = previewPairs(db, settings);
            renderForm(res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', preview });
            return;
          }
          const created = createBatch(db, settings, { actor: user.email, now: clock() });
          redirectWithFlash(req, res, `/console/batches/${created.batchId}`, `Batch created as a draft with ${created.pairs.length} pairs (${created.skipped.length} samples skipped); filling every pair needs at least ${created.capacity.ratersNeeded} raters. Open it when ready.`);
        } catch (error) {
          if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
          res.status(error.status);
          renderForm(res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', error: error.message });
        }
      },
    },
    {
      method: 'get',
      path: '/batches/:id',
      access: 'researcher',
      handler: (req, res) => renderBatchPage(res, requireBatchView(deps, req)),
    },
    {
      method: 'get',
      path: '/batches/:id/progress.json',
      access: 'researcher',
      handler: (req, res) => {
        const progress = batchProgress(db, idParam(req), clock());
        if (!progress) throw new HttpError(404, 'No batch has this id.');
        // The lifecycle buttons and the state's explanation travel with the figures, so an open page follows the state.
        res.json({ ...progress, actions: batchActions(progress.state), explanation: STATE_EXPLANATIONS[progress.state] });
      },
    },
    ...(['open', 'pause', 'close'] as const).map(
      (action): RouteSpec => ({
        method: 'post',
        path: `/batches/:id/${action}`,
        access: 'admin',
        handler: (req, res, user) => {
          const id = idParam(req);
          // Closing is final: the form asks to type "close", as deleting a participant's data asks for "delete".
          if (action === 'close') parseInput(closeFormSchema, req.body, 'confirmation');
          if (action === 'open') {
            const current = requireBatchView(deps, req);
            // A failing blocking item: the batch page again, with the checklist naming what to fix (409).
            if (current.state !== 'open' && blockingFailures(checklistOf(current)).length > 0) {
              res.status(409);
              renderBatchPage(res, current, 'The batch was not opened: fix the failing items of the launch checklist below.');
              return;
            }
          }
          const batch = transitionBatch(db, id, action, user.email, clock());
          redirectWithFlash(req, res, `/console/batches/${id}`, `Batch is now ${batch.state}.`);
        },
      }),
    ),
    {
      method: 'post',
      path: '/batches/:id/clone',
      access: 'admin',
      handler: (req, res, user) => {
        const id = idParam(req);
        const { blockParticipants } = parseInput(cloneFormSchema, req.body, 'clone');
        const source = requireBatchView(deps, req);
        // A new round usually wants fresh raters: the clone may turn away everyone who took part in this batch.
        const overrides = blockParticipants ? { blockParticipantsOf: [...source.settings.blockParticipantsOf, id] } : {};
        const created = cloneBatch(db, id, { actor: user.email, now: clock(), overrides });
        redirectWithFlash(
          req,
          res,
          `/console/batches/${created.batchId}/edit`,
          `Cloned into a new draft batch with ${created.pairs.length} pairs${blockParticipants ? `; participants of batch ${id} will be turned away` : ''}; adjust its settings, then open it.`,
        );
      },
    },
    {
      method: 'get',
      path: '/batches/:id/edit',
      access: 'admin',
      handler: (req, res, user) => {
        const { batch, frozen } = editableBatch(req, user);
        renderForm(res, { title: `Edit ${batch.name}`, form: settingsToForm(batch.settings), action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen });
      },
    },
    {
      method: 'post',
      path: '/batches/:id/edit',
      access: 'admin',
      handler: (req, res, user) => {
        const { batch, frozen } = editableBatch(req, user);
        const form = readBatchForm(req.body as Record<string, unknown>);
        const errors = batchFormErrors(formToSettings(form));
        if (errors) {
          res.status(400);
          renderForm(res, { title: `Edit ${batch.name}`, form, action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen, errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
          return;
        }
        try {
          updateBatchSettings(db, batch.id, formToSettings(form), { actor: user.email, now: clock() });
        } catch (error) {
          if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
          res.status(error.status);
          renderForm(res, { title: `Edit ${batch.name}`, form, action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen, error: error.message });
          return;
        }
        redirectWithFlash(req, res, `/console/batches/${batch.id}`, 'Settings saved.');
      },
    },
  ];
}
