import type { Response } from 'express';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import { PROVIDER_KINDS } from '../batches/batch.schema.js';
import { createBatch } from '../batches/create-batch.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { FIELD_ERRORS_SUMMARY, refusalOnForm } from './batch-pages.routes.js';
import type { ConsoleDeps } from './console-deps.js';
import { defaultRoleplayForm, readRoleplayForm, roleplayFormErrors, roleplayFormToSettings, type RoleplayFormValues } from './roleplay-form.js';

// The console's form for a new role-play batch (issue 52), beside the rating batch form and linked from it: the same
// settings `batches create --from FILE.json` takes with "task": "roleplay", validated by the same schema.

const ACTION = '/console/batches/new/roleplay';

function renderRoleplayForm(res: Response, form: RoleplayFormValues, extra: { errors?: Record<string, string>; error?: string | null } = {}) {
  renderPage(res, 'roleplay-form', { title: 'New role-play batch', form, action: ACTION, providers: PROVIDER_KINDS, errors: {}, error: null, ...extra });
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

/** The new role-play batch form and its submission (admins, as every batch creation). */
export function roleplayFormRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/batches/new/roleplay', access: 'admin', handler: showRoleplayForm() },
    { method: 'post', path: '/batches/new/roleplay', access: 'admin', handler: submitRoleplayForm(deps) },
  ];
}
