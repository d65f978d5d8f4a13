import { z } from 'zod';
import { exclusionLines, reallocationLines } from '../analysis/sequential-report.js';
import { comparisonStandingLines } from '../analysis/sequential-standing.js';
import { listReallocations } from '../rating/reallocation.queries.js';
import { listComparisonStops, listSequentialExclusions } from '../rating/sequential.queries.js';
import type { Request, Response } from 'express';
import { cloneBatch, frozenKeys, getBatch, transitionBatch, updateBatchSettings, type BatchView } from '../batches/batch.commands.js';
import { CONTEXTS, DEFAULT_QUESTION, PROVIDER_KINDS } from '../batches/batch.schema.js';
import { type CapacityResult, checkBatchCapacity } from '../batches/batch-capacity.js';
import { createBatch, previewPairs } from '../batches/create-batch.js';
import { NAME_TAKEN } from '../batches/batch-name.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { blockingFailures, payPerHour } from '../batches/launch-checklist.js';
import { describeMinimum } from '../batches/minimum-time.js';
import { formatMoney } from '../batches/pay.js';
import { platformPayFloor } from '../batches/platform-pay-floor.js';
import { raterLinks } from '../batches/rater-links.js';
import { consentTimeOfFullSession, createWordsMemo, type WordsMemo } from '../rating/consent-time.queries.js';
import { previewUrl } from '../rating/rater-token.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import type { SessionUser } from '../auth/session-user.js';
import type { Db } from '../db/connection.js';
import type { FieldErrors } from '../web/field-errors.js';
import { HttpError } from '../web/http-error.js';
import { seeOther } from '../web/see-other.js';
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
import { followNotice } from '../recruiting/platform-follow.js';
import { isCollectingBatch, renderCollectingBatchPage } from './roleplay-pages.routes.js';

const newBatchQuerySchema = z.object({ run: z.string().trim().max(200).optional() });
const closeFormSchema = z.object({ confirm: z.literal('close', { error: 'type "close" to confirm; the batch was not closed' }) });
const cloneFormSchema = z.object({ blockParticipants: z.enum(['on', '1', 'true']).optional().transform((v) => v !== undefined) });

export function requireBatchView(deps: ConsoleDeps, req: Request): BatchView {
  const batch = getBatch(deps.db, idParam(req));
  if (!batch) throw new HttpError(404, 'No batch has this id.');
  return batch;
}

export const FIELD_ERRORS_SUMMARY = 'Nothing was saved: see the messages by the fields below.';

/** A refusal as the form shows it: a name another batch has by the name's own input, any other at the top. */
export function refusalOnForm(error: UserFacingError): { errors?: FieldErrors; error: string } {
  return error.code === NAME_TAKEN ? { errors: { name: error.message }, error: FIELD_ERRORS_SUMMARY } : { error: error.message };
}

const formOptions = {
  contexts: CONTEXTS,
  providers: PROVIDER_KINDS,
  reasons: ['off', 'optional', 'required'],
  defaultQuestion: DEFAULT_QUESTION,
  moreQuestionRows: MORE_QUESTION_ROWS,
};

/**
 * The console's dependencies plus the words per comparison, counted once per batch while its pairs stay the same
 * (every turn of a batch of a million judgments took 0.3 s, counted twice a page). One memo per app.
 */
type BatchPageDeps = ConsoleDeps & { wordsMemo: WordsMemo };

/**
 * The launch checklist with the time promised at consent now and the configured pay floor; the batch page passes the
 * time and capacity it shows (each reads every regular pair of the batch: 30 ms at 20,000 pairs).
 */
function checklistOf(deps: BatchPageDeps, batch: BatchView, shown?: { time: FullSessionTime; capacity: CapacityResult }) {
  const { db, config, wordsMemo } = deps;
  // A role-play batch promises the time it states (the wait included): there are no comparisons to time.
  if (isCollectingBatch(batch)) return batchLaunchChecklist(db, batch.id, { publicUrl: config.publicUrl, minPayPerHour: config.minPayPerHour });
  const capacity = shown?.capacity ?? checkBatchCapacity(db, batch.id);
  const time = shown?.time ?? consentTimeOfFullSession(db, batch.id, batch.settings, wordsMemo, capacity);
  // The minimum of the time promised is the full session's minimum, its words counted once through the memo.
  const minimum = capacity.pairs > 0 ? time.minimum : null;
  return batchLaunchChecklist(db, batch.id, { minutes: time.minutes, minimum, minPayPerHour: config.minPayPerHour, publicUrl: config.publicUrl }, capacity);
}

type FullSessionTime = ReturnType<typeof consentTimeOfFullSession>;

/** The batch page's "Time and pay": the time promised, the least a session takes, pay per hour at it and the platform's floor. */
function timeAndPay(batch: BatchView, time: FullSessionTime) {
  const rate = payPerHour(batch.settings.pay, time.minutes);
  return {
    minimumText: describeMinimum(time.minimum),
    floor: rate ? platformPayFloor(batch.settings.provider.kind, rate.currency) : null,
    formatMoney,
  };
}

function renderBatchPage(deps: BatchPageDeps, res: Response, batch: BatchView, error?: string) {
  if (isCollectingBatch(batch)) {
    renderCollectingBatchPage(deps, res, batch, error);
    return;
  }
  const { db, clock, config, wordsMemo } = deps;
  const capacity = checkBatchCapacity(db, batch.id);
  const consentTime = consentTimeOfFullSession(db, batch.id, batch.settings, wordsMemo, capacity);
  const checklist = checklistOf(deps, batch, { time: consentTime, capacity });
  renderPage(res, 'batch', {
    title: batch.name,
    batch,
    progress: batchProgress(db, batch.id, clock()),
    links: raterLinks(batch, config.publicUrl),
    previewUrl: previewUrl(config.publicUrl, deps.sessionSecret, batch.publicId),
    explanation: STATE_EXPLANATIONS[batch.state],
    actions: batchActions(batch.state),
    explanations: STATE_EXPLANATIONS,
    frozen: frozenKeys(db, batch),
    settingsJson: JSON.stringify(batch.settings, null, 2),
    capacity,
    checklist,
    launchBlocked: blockingFailures(checklist).length > 0,
    consentTime,
    timeAndPay: timeAndPay(batch, consentTime),
    payRate: payPerHour(batch.settings.pay, consentTime.minutes),
    minPayPerHour: config.minPayPerHour,
    sequential: sequentialNotice(db, batch),
    platformFollow: followNotice(db, config, batch),
    error,
  });
}

/** A sequential batch's notice (issue 44): where each comparison stands, and whether the batch closed itself. */
function sequentialNotice(db: Db, batch: BatchView): { closedItself: boolean; lines: string[] } | null {
  if (!batch.settings.stopping) return null;
  const stops = listComparisonStops(db, batch.id);
  const closedItself = batch.state === 'closed' && stops.length > 0 && stops.every((c) => c.stopped_at !== null);
  const sentence = (l: string) => `${l[0]?.toUpperCase() ?? ''}${l.slice(1)}.`;
  const moved = [...reallocationLines(listReallocations(db, batch.id)), ...exclusionLines(listSequentialExclusions(db, batch.id))].map(sentence);
  return { closedItself, lines: [...comparisonStandingLines(db, batch.settings, stops), ...moved] };
}

function renderForm(db: Db, res: Response, values: Record<string, unknown> & { form: BatchFormValues }) {
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
}

function editableBatch(deps: ConsoleDeps, req: Request, user: SessionUser) {
  const batch = requireBatchView(deps, req);
  return { batch, frozen: frozenKeys(deps.db, batch), actor: user.email };
}

/**
 * This form is the rating batches': a role-play batch has its own (roleplay-form.routes.ts) and a writing batch is
 * edited with `batches edit`. Saving the rating form's fields over theirs would mix two kinds of settings.
 */
function collectingEditRefusal(batch: BatchView): { message: string; to: string | null } | null {
  if (batch.settings.task === 'roleplay') return { message: `Batch ${batch.id} is a role-play batch: edit it at /console/batches/${batch.id}/edit/roleplay.`, to: `/console/batches/${batch.id}/edit/roleplay` };
  if (batch.settings.task === 'write') return { message: `Batch ${batch.id} is a writing batch: edit its settings with simarena batches edit while it is a draft.`, to: null };
  return null;
}

function showBatchList(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const page = parsePage(req.query);
    const total = countBatches(db);
    renderPage(res, 'batches', { title: 'Batches', batches: listBatchesWithProgress(db, page.perPage, page.offset), page, total });
  };
}

function showNewBatchForm(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
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
    renderForm(db, res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new' });
  };
}

function submitNewBatch(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const body = req.body as Record<string, unknown>;
    const form = readBatchForm(body);
    const settings = formToSettings(form);
    const errors = batchFormErrors(settings);
    if (errors) {
      res.status(400);
      renderForm(db, res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
      return;
    }
    try {
      if (body.intent === 'preview') {
        const preview = previewPairs(db, settings);
        renderForm(db, res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', preview });
        return;
      }
      const created = createBatch(db, settings, { actor: user.email, now: clock() });
      redirectWithFlash(req, res, `/console/batches/${created.batchId}`, `Batch created as a draft with ${created.pairs.length} pairs (${created.skipped.length} samples skipped); filling every pair needs at least ${created.capacity.ratersNeeded} raters. Open it when ready.`);
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
      res.status(error.status);
      renderForm(db, res, { title: 'New batch', form, action: '/console/batches/new', mode: 'new', ...refusalOnForm(error) });
    }
  };
}

function showBatchPage(deps: BatchPageDeps): RouteHandler {
  return (req, res) => renderBatchPage(deps, res, requireBatchView(deps, req));
}

function showBatchProgress(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res) => {
    const progress = batchProgress(db, idParam(req), clock());
    if (!progress) throw new HttpError(404, 'No batch has this id.');
    // The lifecycle buttons and the state's explanation travel with the figures, so an open page follows the state.
    res.json({ ...progress, actions: batchActions(progress.state), explanation: STATE_EXPLANATIONS[progress.state] });
  };
}

function submitTransition(deps: BatchPageDeps, action: 'open' | 'pause' | 'close'): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const id = idParam(req);
    // Closing is final: the form asks to type "close", as deleting a participant's data asks for "delete".
    if (action === 'close') parseInput(closeFormSchema, req.body, 'confirmation');
    if (action === 'open') {
      const current = requireBatchView(deps, req);
      // A failing blocking item: the batch page again, with the checklist naming what to fix (409).
      if (current.state !== 'open' && blockingFailures(checklistOf(deps, current)).length > 0) {
        res.status(409);
        renderBatchPage(deps, res, current, 'The batch was not opened: fix the failing items of the launch checklist below.');
        return;
      }
    }
    const batch = transitionBatch(db, id, action, user.email, clock());
    redirectWithFlash(req, res, `/console/batches/${id}`, `Batch is now ${batch.state}.`);
  };
}

function submitClone(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
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
  };
}

function showEditForm(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res, user) => {
    const { batch, frozen } = editableBatch(deps, req, user);
    const refusal = collectingEditRefusal(batch);
    if (refusal?.to) {
      seeOther(res, refusal.to);
      return;
    }
    if (refusal) throw new UserFacingError(refusal.message, 409);
    renderForm(db, res, { title: `Edit ${batch.name}`, form: settingsToForm(batch.settings), action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen });
  };
}

/**
 * The form's settings, with those it does not show (the stopping rule, the quality thresholds: set in the batch file)
 * kept as they are: an edit of the pay must not reset them to their defaults (issue 51: a sequential batch's rule and
 * thresholds are frozen once a look is taken, and were silently reset by any edit from this form).
 */
function withUnshownSettings(current: BatchView['settings'], fromForm: Record<string, unknown>): Record<string, unknown> {
  const kept = Object.fromEntries(Object.entries(current).filter(([key]) => !(key in fromForm)));
  return { ...kept, ...fromForm };
}

function submitEdit(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const { batch, frozen } = editableBatch(deps, req, user);
    const refusal = collectingEditRefusal(batch);
    if (refusal) throw new UserFacingError(refusal.message, 409);
    const form = readBatchForm(req.body as Record<string, unknown>);
    const errors = batchFormErrors(formToSettings(form));
    if (errors) {
      res.status(400);
      renderForm(db, res, { title: `Edit ${batch.name}`, form, action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen, errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
      return;
    }
    try {
      updateBatchSettings(db, batch.id, withUnshownSettings(batch.settings, formToSettings(form)), { actor: user.email, now: clock() });
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
      res.status(error.status);
      renderForm(db, res, { title: `Edit ${batch.name}`, form, action: `/console/batches/${batch.id}/edit`, mode: 'edit', batch, frozen, ...refusalOnForm(error) });
      return;
    }
    redirectWithFlash(req, res, `/console/batches/${batch.id}`, 'Settings saved.');
  };
}

/** Batches: list, create (with a preview of the pairs), detail with live progress, lifecycle, edit and clone. */
export function batchRoutes(deps: ConsoleDeps): RouteSpec[] {
  const pageDeps: BatchPageDeps = { ...deps, wordsMemo: createWordsMemo() };
  return [
    { method: 'get', path: '/batches', access: 'researcher', handler: showBatchList(deps) },
    { method: 'get', path: '/batches/new', access: 'admin', handler: showNewBatchForm(deps) },
    { method: 'post', path: '/batches/new', access: 'admin', handler: submitNewBatch(deps) },
    { method: 'get', path: '/batches/:id', access: 'researcher', handler: showBatchPage(pageDeps) },
    { method: 'get', path: '/batches/:id/progress.json', access: 'researcher', handler: showBatchProgress(deps) },
    ...(['open', 'pause', 'close'] as const).map(
      (action): RouteSpec => ({ method: 'post', path: `/batches/:id/${action}`, access: 'admin', handler: submitTransition(pageDeps, action) }),
    ),
    { method: 'post', path: '/batches/:id/clone', access: 'admin', handler: submitClone(deps) },
    { method: 'get', path: '/batches/:id/edit', access: 'admin', handler: showEditForm(deps) },
    { method: 'post', path: '/batches/:id/edit', access: 'admin', handler: submitEdit(deps) },
  ];
}
