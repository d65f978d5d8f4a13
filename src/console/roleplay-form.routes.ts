import type { Request, Response } from 'express';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import { type BatchView, editDraftBatch, getBatch } from '../batches/batch.commands.js';
import { PROVIDER_KINDS, roleplayOf } from '../batches/batch.schema.js';
import { createBatch } from '../batches/create-batch.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { FIELD_ERRORS_SUMMARY, refusalOnForm } from './batch-pages.routes.js';
import { HttpError } from '../web/http-error.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import {
  defaultRoleplayForm,
  mergeRoleplayEdit,
  readRoleplayForm,
  roleplayFormErrors,
  roleplayFormToSettings,
  type RoleplayFormValues,
  settingsToRoleplayForm,
} from './roleplay-form.js';

// The console's form of a role-play batch (issue 52), new (linked from the rating batch form) and editing (linked from
// the role-play batch page): the same settings `batches create --from FILE.json` takes with "task": "roleplay",
// validated by the same schema; an edit, of a draft only, goes through editDraftBatch as `batches edit` does.

const ACTION = '/console/batches/new/roleplay';

type FormPage = { errors?: Record<string, string>; error?: string | null; batch?: BatchView };

/** The form, new (no batch) or editing a stored role-play batch (whose run cannot change). */
function renderRoleplayForm(res: Response, form: RoleplayFormValues, extra: FormPage = {}) {
  const editing = extra.batch ?? null;
  renderPage(res, 'roleplay-form', {
    title: editing ? `Edit ${editing.name}` : 'New role-play batch',
    form,
    action: editing ? `/console/batches/${editing.id}/edit/roleplay` : ACTION,
    editing,
    providers: PROVIDER_KINDS,
    errors: {},
    error: null,
    ...extra,
  });
}

function requireRoleplayBatch(deps: ConsoleDeps, req: Request): BatchView {
  const batch = getBatch(deps.db, idParam(req));
  if (!batch || !roleplayOf(batch.settings)) throw new HttpError(404, 'No role-play batch has this id.');
  return batch;
}

function showRoleplayForm(): RouteHandler {
  return (_req, res) => renderRoleplayForm(res, defaultRoleplayForm());
}

function submitRoleplayForm(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const form = readRoleplayForm(req.body as Record<string, unknown>);
    const settings = roleplayFormToSettings(form);
    const errors = roleplayFormErrors(settings);
    if (errors) {
      res.status(400);
      renderRoleplayForm(res, form, { errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
      return;
    }
    try {
      const created = createBatch(db, settings, { actor: user.email, now: clock() });
      redirectWithFlash(
        req,
        res,
        `/console/batches/${created.batchId}`,
        `Role-play batch created as a draft, collecting into run "${created.run?.name ?? ''}" (${created.capacity.samples} scenario casts to play). Check its launch checklist, then open it.`,
      );
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
      res.status(error.status);
      renderRoleplayForm(res, form, refusalOnForm(error));
    }
  };
}

function showRoleplayEdit(deps: ConsoleDeps): RouteHandler {
  return (req, res) => {
    const batch = requireRoleplayBatch(deps, req);
    renderRoleplayForm(res, settingsToRoleplayForm(batch.settings), { batch });
  };
}

/**
 * Saves what the form shows over the stored settings (what it does not show is kept) of a draft, as `batches edit`
 * does: an open batch has participants in conversations whose turns and partner rules must not move under them.
 */
function submitRoleplayEdit(deps: ConsoleDeps): RouteHandler {
  const { db, clock } = deps;
  return (req, res, user) => {
    const batch = requireRoleplayBatch(deps, req);
    const form = readRoleplayForm(req.body as Record<string, unknown>);
    const settings = mergeRoleplayEdit(batch.settings, form);
    const errors = roleplayFormErrors(settings);
    if (errors) {
      res.status(400);
      renderRoleplayForm(res, form, { batch, errors, error: errors._form ?? FIELD_ERRORS_SUMMARY });
      return;
    }
    try {
      editDraftBatch(db, batch.id, settings, { actor: user.email, now: clock() });
    } catch (error) {
      if (!(error instanceof UserFacingError) || error.status >= 500) throw error;
      res.status(error.status);
      renderRoleplayForm(res, form, { batch, ...refusalOnForm(error) });
      return;
    }
    redirectWithFlash(req, res, `/console/batches/${batch.id}`, 'Settings saved.');
  };
}

/** The role-play batch form, new and editing, and their submissions (admins, as every batch creation and edit). */
export function roleplayFormRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/batches/new/roleplay', access: 'admin', handler: showRoleplayForm() },
    { method: 'post', path: '/batches/new/roleplay', access: 'admin', handler: submitRoleplayForm(deps) },
    { method: 'get', path: '/batches/:id/edit/roleplay', access: 'admin', handler: showRoleplayEdit(deps) },
    { method: 'post', path: '/batches/:id/edit/roleplay', access: 'admin', handler: submitRoleplayEdit(deps) },
  ];
}
