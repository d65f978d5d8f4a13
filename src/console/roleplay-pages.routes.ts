import type { Response } from 'express';
import { z } from 'zod';
import type { RouteHandler, RouteSpec } from '../auth/route-table.js';
import type { BatchView } from '../batches/batch.commands.js';
import { batchLaunchChecklist } from '../batches/batch-launch.js';
import { roleplayOf, writeOf } from '../batches/batch.schema.js';
import { countCollected, getCollected, listCollected } from '../batches/collected.queries.js';
import { reviewCollectedDialogue } from '../batches/collection.js';
import { blockingFailures } from '../batches/launch-checklist.js';
import { raterLinks } from '../batches/rater-links.js';
import { liveSummary, playerNotes } from '../live/live-summary.queries.js';
import { countDrafts } from '../live/write.queries.js';
import { HttpError } from '../web/http-error.js';
import { parseInput } from '../web/validate.js';
import { type Page, parsePage } from './pagination.js';
import { redirectWithFlash, renderPage } from '../web/console-page.js';
import { STATE_EXPLANATIONS } from './batch-actions.js';
import { type ConsoleDeps, idParam } from './console-deps.js';
import { batchActions } from './lifecycle-actions.js';
import { getBatch } from '../batches/batch.commands.js';
import { roleplayOutcomesView } from './analysis-pages.routes.js';

// A collecting batch in the console: a role-play batch (issue 52) or a writing batch (issue 53). Where its
// participants are, the dialogues it collected and their review. A researcher accepts or rejects each collected
// dialogue before any enters a rating batch.

const listQuerySchema = z.object({
  outcome: z.enum(['collecting', 'complete', 'incomplete', 'reported']).optional().or(z.literal('').transform(() => undefined)),
  review: z.enum(['pending', 'accepted', 'rejected']).optional().or(z.literal('').transform(() => undefined)),
});
const reviewFormSchema = z.object({
  decision: z.enum(['accept', 'reject'], { message: 'choose accept or reject' }),
  note: z.string().trim().max(2000, 'keep the note under 2,000 characters').optional().transform((v) => (v ? v : null)),
});

/** The batch page of a collecting batch (the rating batch page's place for it: src/console/batch-pages.routes.ts). */
export function renderCollectingBatchPage(deps: ConsoleDeps, res: Response, batch: BatchView, error?: string): void {
  const { db, config } = deps;
  const checklist = batchLaunchChecklist(db, batch.id, { publicUrl: config.publicUrl, minPayPerHour: config.minPayPerHour });
  renderPage(res, 'roleplay-batch', {
    title: batch.name,
    batch,
    roleplay: roleplayOf(batch.settings),
    writing: writeOf(batch.settings)?.writing ?? null,
    live: liveSummary(db, batch.id),
    drafts: countDrafts(db, batch.id),
    collected: countCollected(db, batch.id),
    links: raterLinks(batch, config.publicUrl),
    explanation: STATE_EXPLANATIONS[batch.state],
    actions: batchActions(batch.state),
    checklist,
    launchBlocked: blockingFailures(checklist).length > 0,
    settingsJson: JSON.stringify(batch.settings, null, 2),
    roleplayOutcomes: roleplayOutcomesView(db, batch.id),
    error,
  });
}

/** Whether a batch collects dialogues (role-play or writing) rather than rating them. */
export function isCollectingBatch(batch: BatchView): boolean {
  return roleplayOf(batch.settings) !== null || writeOf(batch.settings) !== null;
}

function requireCollectingBatch(deps: ConsoleDeps, id: number): BatchView {
  const batch = getBatch(deps.db, id);
  if (!batch || !isCollectingBatch(batch)) throw new HttpError(404, 'No role-play or writing batch has this id.');
  return batch;
}

/** Spoken turns below which a collected dialogue cannot be rated: the role-play batch's, or the writing batch's. */
function minTurnsOf(batch: BatchView): number {
  return roleplayOf(batch.settings)?.turns.min ?? writeOf(batch.settings)?.writing.minTurns ?? 0;
}

type ListQuery = { filter: z.infer<typeof listQuerySchema>; page: Page };

/** The review list's filters and page, validated: the list is shown with them, and a review returns to them. */
function readListQuery(query: unknown): ListQuery {
  return { filter: parseInput(listQuerySchema, query, 'filter'), page: parsePage(query) };
}

/** The list's filters and page, as a query string: a review sends the reviewer back to the list they were on. */
function listQueryOf({ filter, page }: ListQuery): string {
  const params = new URLSearchParams();
  if (filter.outcome) params.set('outcome', filter.outcome);
  if (filter.review) params.set('review', filter.review);
  if (page.page > 1) params.set('page', String(page.page));
  if (page.perPage !== 50) params.set('per_page', String(page.perPage));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function showCollected(deps: ConsoleDeps): RouteHandler {
  return (req, res) => {
    const batch = requireCollectingBatch(deps, idParam(req));
    const list = readListQuery(req.query);
    const { filter, page } = list;
    const notes = playerNotes(deps.db, batch.id);
    const rows = listCollected(deps.db, batch.id, filter, { limit: page.perPage, offset: page.offset }).map((row) => ({ ...row, players: notes.get(row.dialogue_id) ?? [] }));
    renderPage(res, 'collected', {
      title: `Collected dialogues of ${batch.name}`,
      batch,
      rows,
      filter,
      page,
      listQuery: listQueryOf(list),
      counts: countCollected(deps.db, batch.id),
      minTurns: minTurnsOf(batch),
    });
  };
}

function submitReview(deps: ConsoleDeps): RouteHandler {
  return (req, res, user) => {
    const batch = requireCollectingBatch(deps, idParam(req));
    const dialogueId = idParam(req, 'dialogueId');
    const form = parseInput(reviewFormSchema, req.body, 'review');
    const back = listQueryOf(readListQuery(req.query));
    if (getCollected(deps.db, dialogueId)?.batch_id !== batch.id) throw new HttpError(404, 'This batch collected no dialogue with this id.');
    reviewCollectedDialogue(deps.db, dialogueId, form.decision === 'accept' ? 'accepted' : 'rejected', { actor: user.email, note: form.note, now: deps.clock() });
    redirectWithFlash(req, res, `/console/batches/${batch.id}/collected${back}`, `Dialogue ${dialogueId} ${form.decision === 'accept' ? 'accepted: a rating batch over its run can now pair it' : 'rejected: it will never be rated'}.`);
  };
}

/** The review list of a collecting batch's collected dialogues, and the accept/reject of each. */
export function roleplayRoutes(deps: ConsoleDeps): RouteSpec[] {
  return [
    { method: 'get', path: '/batches/:id/collected', access: 'researcher', handler: showCollected(deps) },
    { method: 'post', path: '/batches/:id/collected/:dialogueId', access: 'admin', handler: submitReview(deps) },
  ];
}
