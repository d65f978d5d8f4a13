import express, { type IRouter, type Request, type RequestHandler } from 'express';
import { cachedBatchRowByPublicId } from '../batches/batch-row-cache.js';
import { readBatchSettings } from '../batches/batch-settings.js';
import type { BatchRow } from '../batches/batch.queries.js';
import { type CollectingTask, roleplayOf, writeOf } from '../batches/batch.schema.js';
import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import { addressHash } from '../rating/client-address.js';
import { readEntryParams } from '../rating/providers.js';
import { raterHeaders } from '../rating/rater-headers.js';
import { batchOf, createRaterPages, entryTokenFrom, type RaterPages, tokenFrom } from '../rating/rater-pages.js';
import { entryFromToken, entryToken, type EntryIdentity, raterIdFromToken } from '../rating/rater-token.js';
import { setRaterStatus } from '../rating/rating.queries.js';
import { csrfProtection } from '../web/csrf.js';
import { newPublicId } from '../web/ids.js';
import { seeOther } from '../web/see-other.js';
import { describeIssues } from '../web/validate.js';
import { admitPlayer, decideLiveEntry, type LiveAdmission } from './live-entry.js';
import type { LiveHub } from './live-hub.js';
import { answersFormSchema, consentFormSchema, reportFormSchema, resumeAfter, turnFormSchema } from './live.schema.js';
import { donePage, livePages, playPage, type LivePages } from './live-pages.js';
import type { Sink } from './presence.js';
import { getPlayer } from './live.queries.js';

// The participant's pages of a role-play batch (issue 52), beside the rater pages and under the same /r/<batch> link:
// each route answers only for a role-play batch and passes any other on (`next('route')`) to the rater pages. State
// travels in the same signed tokens as a rater's (no cookies: MTurk frames the pages), every form is bound to it
// (CSRF), and the headers are the provider's own.

export type LiveRoutesDeps = { db: Db; sessionSecret: string; clock: Clock; hub: LiveHub; random?: () => number };

/**
 * The batch of the request when it is a batch of this collecting task (a role-play batch, or a writing batch: issue
 * 53); any other batch goes on to the next pages (the writing pages, then the rater pages).
 */
export function collectingBatchOnly(db: Db, task: CollectingTask): RequestHandler {
  const headers = raterHeaders();
  return (req, res, next) => {
    const batch = cachedBatchRowByPublicId(db, String(req.params.batchId));
    const settings = batch && batch.state !== 'draft' ? readBatchSettings(batch) : null;
    if (!batch || !settings || settings.task !== task || (task === 'roleplay' ? !roleplayOf(settings) : !writeOf(settings))) {
      next('route');
      return;
    }
    res.set('Cache-Control', 'no-store');
    res.locals.raterBatch = { batch, settings };
    headers[settings.provider.kind](req, res, next);
  };
}

function hashOf(pages: RaterPages, req: Request, b: BatchRow): string | null {
  return addressHash(pages.deps.sessionSecret, b.public_id, req.ip);
}

export function showEntry(lp: LivePages): RequestHandler {
  const { pages } = lp;
  const { db, clock } = pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const params = readEntryParams(settings.provider, req.query as Record<string, unknown>);
    if (params.kind === 'missing') throw new UserFacingError(`This study link is missing what it needs (${params.missing.join(', ')}). Please open the study again from your recruitment platform.`, 400);
    if (params.kind === 'invalid') throw new UserFacingError(params.message, 400);
    if (params.kind === 'mturk-preview') {
      const what = lp.prefix === 'live' ? 'you chat live with a partner in a role-play' : 'you write a short conversation between two characters';
      pages.notice(res, 200, null, 'Preview of this task', `In this task ${what}. Accept the HIT to start; please accept it only if you can stay for the whole task.`);
      return;
    }
    const entry: EntryIdentity = params.kind === 'link' ? { kind: 'link', nonce: newPublicId() } : params;
    const decision = decideLiveEntry(db, b, settings, entry, hashOf(pages, req, b), clock());
    if (decision.kind === 'returning') seeOther(res, lp.placeOf(b, decision.rater));
    else if (b.state !== 'open') pages.notOpen(res, b, settings);
    else if (decision.kind === 'open') lp.renderConsent(res, entryToken(pages.deps.sessionSecret, b.public_id, { entry, raterPublicId: newPublicId() }, clock()));
    else lp.refuse(res, decision);
  };
}

export function submitConsent(lp: LivePages): RequestHandler {
  const { pages } = lp;
  const { db, clock, sessionSecret } = pages.deps;
  return (req, res) => {
    const { batch: b, settings } = batchOf(res);
    const parsed = consentFormSchema.safeParse(req.body);
    if (!parsed.success) throw new UserFacingError(`${describeIssues(parsed.error).replace(/^[a-z_]+: /, '')}. Go back and choose one of the buttons.`, 400);
    const signed = entryFromToken(sessionSecret, b.public_id, entryTokenFrom(req), clock());
    if (!signed) throw new UserFacingError('This consent form has expired. Please open the study again from the link you were given.', 403, 'bad_entry_token');
    if (b.state !== 'open') {
      pages.notOpen(res, b, settings);
      return;
    }
    const admission: LiveAdmission = admitPlayer(db, b, settings, signed.entry, {
      agree: parsed.data.decision === 'agree',
      raterPublicId: signed.raterPublicId,
      userAgent: req.get('user-agent') ?? null,
      addressHash: hashOf(pages, req, b),
      now: clock(),
    });
    if (admission.kind === 'admitted' || admission.kind === 'returning') seeOther(res, lp.placeOf(b, admission.rater));
    else lp.refuse(res, admission);
  };
}

export function showInstructions(lp: LivePages): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (lp.redirectUnlessAt(res, b, rater, `${lp.prefix}/instructions`)) return;
    lp.renderInstructions(res, rater);
  };
}

function submitInstructions(lp: LivePages, hub: LiveHub): RequestHandler {
  const { clock } = lp.pages.deps;
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (rater.status === 'instructions') {
      setRaterStatus(lp.pages.deps.db, rater.id, 'rating', clock());
      hub.join(rater.id);
    }
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

function showPlay(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    if (lp.redirectUnlessAt(res, b, rater, 'live')) return;
    // A rater who reached this step without a player row (a crash between the two writes) enters the lobby now.
    hub.join(rater.id);
    playPage(lp, res, rater);
  };
}

/** The page's event stream (server-sent events): what it missed since Last-Event-ID, then every event as it comes. */
function openEvents(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const rater = lp.pages.requireRater(req, res);
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    // A page that loses its stream (a restart, a network change) asks again after a second, with Last-Event-ID.
    res.write('retry: 1000\n\n');
    res.socket?.setNoDelay(true);
    // A turn sends each page two events (the turn, then whose turn is next): what one tick sends goes out in one write,
    // half the socket writes per turn (the live relay benchmark, docs/contributor/benchmarks.md).
    let pending = '';
    const flush = () => {
      const chunk = pending;
      pending = '';
      if (chunk !== '' && !res.writableEnded) res.write(chunk);
    };
    const sink: Sink = {
      send: (event, id) => {
        if (pending === '') queueMicrotask(flush);
        pending += `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(event)}\n\n`;
      },
      close: () => {
        flush();
        res.end();
      },
    };
    // A comment line every 15 s keeps proxies from closing an idle stream (Caddy and nginx close idle upstreams).
    const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
    keepAlive.unref();
    req.on('close', () => {
      clearInterval(keepAlive);
      hub.detach(rater.id, sink);
    });
    hub.attach(rater.id, sink, resumeAfter(req.get('last-event-id'), req.query.after));
  };
}

/** A turn from the page (fetch): JSON back, so the page can keep the message and say why it was not sent. */
function submitTurn(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const rater = lp.pages.requireRater(req, res);
    const parsed = turnFormSchema.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: describeIssues(parsed.error).replace(/^[a-z_]+: /, '') });
      return;
    }
    const reply = hub.takeTurn(rater.id, parsed.data);
    if (reply.kind === 'refused') res.status(reply.status).json({ error: reply.message });
    else res.json({ ok: true, idx: reply.idx, duplicate: reply.kind === 'duplicate' });
  };
}

function submitReport(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    const { reason } = reportFormSchema.parse(req.body);
    hub.report(rater.id, reason === '' ? null : reason);
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

function submitAnswers(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    const parsed = answersFormSchema.safeParse(req.body);
    if (!parsed.success) throw new UserFacingError(`Please answer both questions: ${describeIssues(parsed.error).replace(/^[a-z_]+: /, '')}. Go back and try again.`, 400);
    hub.answer(rater.id, { guess: parsed.data.guess, goalScore: parsed.data.goal });
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

function submitWithdraw(lp: LivePages, hub: LiveHub): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    hub.withdraw(rater.id);
    seeOther(res, lp.placeAfterChange(b, rater));
  };
}

export function showDone(lp: LivePages): RequestHandler {
  return (req, res) => {
    const { batch: b } = batchOf(res);
    const rater = lp.pages.requireRater(req, res);
    // A player whose part ended without a code (away too long) is done while their rater is still "rating".
    const ended = getPlayer(lp.pages.deps.db, rater.id)?.state === 'done';
    if (!ended && lp.redirectUnlessAt(res, b, rater, `${lp.prefix}/done`)) return;
    donePage(lp, res, rater);
  };
}

/** Forms are bound to the rater's signed token, or before consent to the signed entry token of the consent form. */
export function liveCsrf(secret: string): RequestHandler {
  return csrfProtection(secret, (req) => {
    const id = raterIdFromToken(secret, tokenFrom(req));
    if (id) return `rater:${id}`;
    const et = entryTokenFrom(req);
    return typeof et === 'string' && et.length > 0 && et.length <= 2000 ? `entry:${et}` : null;
  });
}

/** Mounts the role-play pages on `app` before the rater pages (whose /r fallbacks answer anything left). */
export function mountLiveRoutes(app: IRouter, deps: LiveRoutesDeps): void {
  const pages = createRaterPages({ db: deps.db, sessionSecret: deps.sessionSecret, clock: deps.clock, random: deps.random ?? Math.random });
  const lp = livePages(pages);
  const batch = collectingBatchOnly(deps.db, 'roleplay');
  const body = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 });
  const csrf = liveCsrf(deps.sessionSecret);
  const { hub } = deps;
  app.get('/r/:batchId', batch, csrf, showEntry(lp));
  app.post('/r/:batchId/live/consent', batch, body, csrf, submitConsent(lp));
  app.get('/r/:batchId/live/instructions', batch, csrf, showInstructions(lp));
  app.post('/r/:batchId/live/instructions', batch, body, csrf, submitInstructions(lp, hub));
  app.get('/r/:batchId/live', batch, csrf, showPlay(lp, hub));
  app.get('/r/:batchId/live/events', batch, openEvents(lp, hub));
  app.post('/r/:batchId/live/turn', batch, body, csrf, submitTurn(lp, hub));
  app.post('/r/:batchId/live/report', batch, body, csrf, submitReport(lp, hub));
  app.post('/r/:batchId/live/answers', batch, body, csrf, submitAnswers(lp, hub));
  app.get('/r/:batchId/live/withdraw', batch, csrf, (req, res) => lp.renderWithdraw(res, lp.pages.requireRater(req, res)));
  app.post('/r/:batchId/live/withdraw', batch, body, csrf, submitWithdraw(lp, hub));
  app.get('/r/:batchId/live/done', batch, csrf, showDone(lp));
}

