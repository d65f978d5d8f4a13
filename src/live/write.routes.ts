import express, { type IRouter, type RequestHandler } from 'express';
import type { ZodError } from 'zod';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { batchOf, createRaterPages } from '../rating/rater-pages.js';
import { setRaterStatus } from '../rating/rating.queries.js';
import { seeOther } from '../web/see-other.js';
import { describeIssues } from '../web/validate.js';
import { livePages, type LivePages } from './live-pages.js';
import { collectingBatchOnly, liveCsrf, showDone, showEntry, showInstructions, submitConsent } from './live.routes.js';
import { buildWriterView } from './player-view.js';
import { draftTurns, getDraft } from './write.queries.js';
import { mergeDraft } from './written-turns.js';
import { draftFormSchema } from './write.schema.js';
import { DRAFT_CONFLICT, HAND_IN_CONFLICT, saveWriting, startWriting, submitWriting, withdrawWriting } from './write-session.js';
import { writePage } from './write-pages.js';

// The participant's pages of a writing batch (issue 53), under the same /r/<batch> link as every batch: entry,
// consent, instructions and the end are the role-play pages' own (one person, one participant; the provider's
// headers and codes), the writing page and its saves are these. Every form is bound to the signed rater token (CSRF).

export type WriteRoutesDeps = { db: Db; sessionSecret: string; clock: Clock };

/** A refusal of the page's form in the writer's words: the zod message without the field's name. */
const refusal = (error: ZodError) => describeIssues(error).replace(/^[a-z_]+: /, '');

function submitInstructions(lp: LivePages): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (rater.status === 'instructions') setRaterStatus(lp.pages.deps.db, rater.id, 'rating', lp.pages.deps.clock());
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

function showWrite(lp: LivePages): RequestHandler {
  const { db, clock } = lp.pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (lp.redirectUnlessAt(res, b, rater, 'write')) return;
    const draft = startWriting(db, b, settings, rater, clock());
    if (!draft) throw new UserFacingError('This study has no conversation left to write. Please return the study on your recruitment platform.', 409);
    writePage(lp, res, b, rater, draft);
  };
}

/** A save from the page (fetch, as the writer types): JSON back, so the page can say whether it is saved. */
function saveDraftRoute(lp: LivePages): RequestHandler {
  const { db, clock } = lp.pages.deps;
  return (req, res) => {
    const { settings } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    const parsed = draftFormSchema.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: refusal(parsed.error) });
      return;
    }
    const reply = saveWriting(db, settings, rater.id, parsed.data, clock());
    if (reply.kind === 'refused') res.status(reply.status).json({ error: reply.message });
    else if (reply.kind === 'conflict') res.status(409).json({ error: DRAFT_CONFLICT, conflict: true, version: reply.version });
    else res.json({ ok: true, version: reply.version, stale: reply.kind === 'stale' });
  };
}

/** Hand-in (a form post carrying the last draft): saved, then handed in, or the page again saying what is missing. */
function submitWrite(lp: LivePages): RequestHandler {
  const { db, clock } = lp.pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    const draft = getDraft(db, rater.id);
    if (rater.status !== 'rating' || !draft) {
      seeOther(res, lp.placeOf(b, rater));
      return;
    }
    const parsed = draftFormSchema.safeParse(req.body);
    if (!parsed.success) throw new UserFacingError(`${refusal(parsed.error)}. Go back and try again.`, 400);
    const saved = saveWriting(db, settings, rater.id, parsed.data, clock());
    if (saved.kind === 'conflict') {
      // Nothing handed in: the page comes back with its own turns (so nothing its writer sees is lost), now based on the
      // stored version, so that handing it in again keeps it.
      const stored = getDraft(db, rater.id) ?? draft;
      const own = { ...stored, draft: JSON.stringify(mergeDraft(draftTurns(stored), parsed.data.turns, clock())) };
      writePage(lp, res, b, rater, own, { status: 409, message: HAND_IN_CONFLICT });
      return;
    }
    const names = buildWriterView(db, draft)?.names ?? ['Character 1', 'Character 2'];
    const reply = saved.kind === 'refused' ? saved : submitWriting(db, b, settings, rater, names, clock());
    if (reply.kind === 'submitted') seeOther(res, lp.placeAfterChange(b, rater));
    else writePage(lp, res, b, rater, getDraft(db, rater.id) ?? draft, reply);
  };
}

function submitWithdraw(lp: LivePages): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (rater.status === 'rating' || rater.status === 'instructions') withdrawWriting(lp.pages.deps.db, rater.id, lp.pages.deps.clock());
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

/** Mounts the writing pages on `app` after the role-play pages and before the rater pages. */
export function mountWriteRoutes(app: IRouter, deps: WriteRoutesDeps): void {
  const pages = createRaterPages({ db: deps.db, sessionSecret: deps.sessionSecret, clock: deps.clock, random: Math.random });
  const lp = livePages(pages, 'write');
  const batch = collectingBatchOnly(deps.db, 'write');
  const body = express.urlencoded({ extended: false, limit: '256kb', parameterLimit: 20 });
  const csrf = liveCsrf(deps.sessionSecret);
  app.get('/r/:batchId', batch, csrf, showEntry(lp));
  app.post('/r/:batchId/write/consent', batch, body, csrf, submitConsent(lp));
  app.get('/r/:batchId/write/instructions', batch, csrf, showInstructions(lp));
  app.post('/r/:batchId/write/instructions', batch, body, csrf, submitInstructions(lp));
  app.get('/r/:batchId/write', batch, csrf, showWrite(lp));
  app.post('/r/:batchId/write/draft', batch, body, csrf, saveDraftRoute(lp));
  app.post('/r/:batchId/write/submit', batch, body, csrf, submitWrite(lp));
  app.get('/r/:batchId/write/withdraw', batch, csrf, (req, res) => lp.renderWithdraw(res, lp.pages.requireRater(req, res)));
  app.post('/r/:batchId/write/withdraw', batch, body, csrf, submitWithdraw(lp));
  app.get('/r/:batchId/write/done', batch, csrf, showDone(lp));
}
