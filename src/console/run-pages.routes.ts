import MarkdownIt from 'markdown-it';
import { z } from 'zod';
import type { Response } from 'express';
import type { BatchInfo } from '../generation/batch-api-client.js';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import { createRun } from '../generation/create-run.js';
import { resolveEndpoint } from '../generation/endpoints.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { GENERATED_MODES } from '../generation/mode.js';
import { getRun, runHasLiveWorker } from '../generation/run.queries.js';
import { requeueFailedDialogues } from '../generation/requeue-failed-dialogues.js';
import { cardSettingsSchema } from '../generation/run-columns.schema.js';
import { parseJsonColumn } from '../db/json-column.js';
import { listRunEvaluations } from '../evaluation/evaluation.queries.js';
import { buildSimulationCard, simulationCardMarkdown } from '../generation/simulation-card.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import type { FieldErrors } from '../web/field-errors.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { parsePage } from './pagination.js';
import { countRuns, findRunWithCounts, listRunDialogues, listRunsWithCounts, type RunListRow, serializeRun } from './run-list.queries.js';
import { runActions } from './lifecycle-actions.js';
import { checkRunForm } from './run-form.js';
import { scenarioCatalogue } from './scenario-catalogue.js';

const cancelFormSchema = z.object({ confirm: z.literal('cancel', { error: 'type "cancel" to confirm; the run was not cancelled' }) });

/** While a resumed run collects the SCRIPT batch the CLI sent (`generate --batch-api`): what the batch is doing. */
function batchNote(info: BatchInfo | null): string | null {
  if (!info) return null;
  const { completed, total, failed } = info.counts;
  return `Collecting the OpenAI batch ${info.id} first: ${info.status.replace('_', ' ')}, ${completed} of ${total} answered, ${failed} failed. Its SCRIPT dialogues are completed from its answers when it ends (within 24 hours).`;
}

const markdown = new MarkdownIt({ html: false, linkify: false });

/** Being generated now: here (the supervisor) or by another process with a fresh heartbeat (e.g. the CLI). */
function isGenerating(deps: ConsoleDeps, run: RunListRow): boolean {
  return deps.runs.isLive(run.id) || runHasLiveWorker(run, deps.clock());
}

function runJson(deps: ConsoleDeps, runId: number) {
  const { db, clock, runs: supervisor } = deps;
  const run = findRunWithCounts(db, runId);
  if (!run) throw new HttpError(404, 'No run has this id.');
  const progress = supervisor.progress(runId);
  const live = supervisor.isLive(runId);
  const serialized = serializeRun(run);
  return {
    ...serialized,
    live,
    in_flight: progress?.inFlight ?? 0,
    remaining_ms: progress?.remainingMs ?? null,
    batch_note: batchNote(supervisor.batch(runId)),
    actions: {
      ...runActions({ kind: serialized.kind, state: serialized.state, live }),
      // The same conditions POST /runs/:id/retry-failed checks, so the button is offered only when it would work.
      retry_failed: serialized.kind === 'generation' && run.failed > 0 && !isGenerating(deps, run),
    },
    updated_at: clock().toISOString(),
  };
}

/** The run's minimum of spoken turns (`--min-spoken-turns`); null for runs made before it existed (no minimum). */
function minSpokenTurnsOf(row: { id: number; settings: string | null }): number | null {
  return row.settings ? (parseJsonColumn(cardSettingsSchema, row.settings, `runs.settings of run ${row.id}`).minSpokenTurns ?? null) : null;
}

function renderForm(deps: ConsoleDeps, res: Response, form: Record<string, unknown>, extra: { errors?: FieldErrors; estimate?: unknown } = {}): void {
  renderPage(res, 'run-form', { title: 'New generation run', modes: GENERATED_MODES, categories: scenarioCatalogue(deps.db), form, errors: extra.errors ?? {}, estimate: extra.estimate ?? null });
}

function endpointFor(deps: ConsoleDeps, name: string, model: string) {
  return resolveEndpoint(deps.config, deps.config.env, name, model);
}

// Pausing and cancelling are the supervisor's one stop, told how.
function submitStop(deps: ConsoleDeps, how: 'pause' | 'cancel', flash: string): RouteHandler {
  return (req, res, user) => {
    const runId = idParam(req);
    // Cancelling cannot be undone: the form asks to type "cancel", as deleting a participant's data asks for "delete".
    if (how === 'cancel') parseInput(cancelFormSchema, req.body, 'confirmation');
    deps.runs.stop(runId, how, user.email);
    redirectWithFlash(req, res, `/console/runs/${runId}`, flash);
  };
}

function showRuns(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const page = parsePage(req.query);
    renderPage(res, 'runs', { title: 'Runs', runs: listRunsWithCounts(db, page.perPage, page.offset), total: countRuns(db), page });
  };
}

function showNewRunForm(deps: ConsoleDeps): RouteHandler {
  return (_req, res) => renderForm(deps, res, { scenarios: 'all', pick: [], modes: ['SCRIPT', 'AGENTS'], endpoint: 'default' });
}

function submitNewRun(deps: ConsoleDeps): RouteHandler {
  const { db, clock, config, runs: supervisor } = deps;
  return (req, res, user) => {
    const body = req.body as Record<string, unknown>;
    const shown = { ...body, pick: [body.pick ?? []].flat(), modes: [body.modes ?? []].flat() };
    const checked = checkRunForm(db, config, body, user.email);
    if (!checked.ok) {
      res.status(400);
      renderForm(deps, res, shown, { errors: checked.errors });
      return;
    }
    // "Estimate" posts the same form and shows what Start would generate and cost (as `generate --dry-run`).
    if (body.intent === 'estimate') {
      renderForm(deps, res, shown, { estimate: { ...checked.estimate, model: checked.input.model, selector: checked.input.scenarios } });
      return;
    }
    try {
      // Refuse before the run row exists, so a refused start leaves no pending run behind.
      supervisor.checkRoom(checked.endpoint.name);
      const runId = createRun(db, checked.input, clock());
      supervisor.start(runId, checked.endpoint, user.email);
      redirectWithFlash(req, res, `/console/runs/${runId}`, 'Run started; this page follows its progress.');
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
      res.status(error.status);
      renderForm(deps, res, shown, { errors: { _form: error.message } });
    }
  };
}

function showRun(deps: ConsoleDeps): RouteHandler {
  const { db } = deps;
  return (req, res) => {
    const runId = idParam(req);
    const run = runJson(deps, runId);
    const page = parsePage(req.query, 100);
    const row = getRun(db, runId);
    const cardHtml = row?.simulation_card ? markdown.render(simulationCardMarkdown(buildSimulationCard(db, runId))) : null;
    const evaluations = listRunEvaluations(db, runId);
    const minSpokenTurns = run.kind === 'generation' && row ? minSpokenTurnsOf(row) : null;
    renderPage(res, 'run', { title: `Run ${run.name}`, run, minSpokenTurns, dialogues: listRunDialogues(db, runId, page.perPage, page.offset), page, cardHtml, evaluations });
  };
}

function showRunProgress(deps: ConsoleDeps): RouteHandler {
  return (req, res) => {
    res.json(runJson(deps, idParam(req)));
  };
}

function submitResume(deps: ConsoleDeps): RouteHandler {
  const { db, runs: supervisor } = deps;
  return (req, res, user) => {
    const runId = idParam(req);
    const run = getRun(db, runId);
    if (!run) throw new HttpError(404, 'No run has this id.');
    if (run.kind !== 'generation') throw new HttpError(409, 'Only generation runs can be resumed.');
    if (!['paused', 'interrupted', 'failed', 'cancelled', 'pending'].includes(run.state)) throw new HttpError(409, `This run is ${run.state}; there is nothing to resume.`);
    supervisor.start(runId, endpointFor(deps, run.endpoint_name ?? 'default', run.model ?? ''), user.email);
    redirectWithFlash(req, res, `/console/runs/${runId}`, 'Run resumed.');
  };
}

// As `simarena generate --resume RUN --retry-failed`: the failed dialogues are queued again as new generations,
// then the run resumes through the supervisor (per-endpoint limit, pause at shutdown) like the Resume button.
function submitRetryFailed(deps: ConsoleDeps): RouteHandler {
  const { db, clock, runs: supervisor } = deps;
  return (req, res, user) => {
    const runId = idParam(req);
    const run = findRunWithCounts(db, runId);
    if (!run) throw new HttpError(404, 'No run has this id.');
    if (run.kind !== 'generation') throw new HttpError(409, 'Only generation runs can generate dialogues again.');
    if (isGenerating(deps, run))
      throw new HttpError(409, 'This run is being generated right now; pause it or let it finish, then generate its failed dialogues again.');
    if (run.failed === 0) throw new HttpError(409, 'This run has no failed dialogues; there is nothing to generate again.');
    // Everything that could refuse the resume is checked before any dialogue is queued again, so a refusal changes nothing.
    const endpoint = endpointFor(deps, run.endpoint_name ?? 'default', run.model ?? '');
    supervisor.checkRoom(endpoint.name);
    const again = requeueFailedDialogues(db, runId, user.email, clock());
    supervisor.start(runId, endpoint, user.email);
    const count = again.length === 1 ? '1 failed dialogue' : `${again.length} failed dialogues`;
    redirectWithFlash(req, res, `/console/runs/${runId}`, `${count} queued again; the run is generating them (earlier attempts stay on record).`);
  };
}

/** Runs: list, start from the browser, live progress, pause/resume/cancel, simulation card. */
export function runRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/runs', access: 'researcher', handler: showRuns(deps) },
    { method: 'get', path: '/runs/new', access: 'admin', handler: showNewRunForm(deps) },
    { method: 'post', path: '/runs/new', access: 'admin', handler: submitNewRun(deps) },
    { method: 'get', path: '/runs/:id', access: 'researcher', handler: showRun(deps) },
    { method: 'get', path: '/runs/:id/progress.json', access: 'researcher', handler: showRunProgress(deps) },
    { method: 'post', path: '/runs/:id/pause', access: 'admin', handler: submitStop(deps, 'pause', 'Pausing: calls in flight finish, then the run stops; resume it any time.') },
    { method: 'post', path: '/runs/:id/cancel', access: 'admin', handler: submitStop(deps, 'cancel', 'Run cancelled; what was generated is kept.') },
    { method: 'post', path: '/runs/:id/resume', access: 'admin', handler: submitResume(deps) },
    { method: 'post', path: '/runs/:id/retry-failed', access: 'admin', handler: submitRetryFailed(deps) },
  ];
}
