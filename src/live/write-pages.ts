import type { Response } from 'express';
import type { BatchRow } from '../batches/batch.queries.js';
import { writeOf } from '../batches/batch.schema.js';
import { batchOf } from '../rating/rater-pages.js';
import type { RaterRow } from '../rating/rating.queries.js';
import { seeOther } from '../web/see-other.js';
import type { LivePages } from './live-pages.js';
import { TURN_TEXT_MAX } from './live.schema.js';
import { buildWriterView } from './player-view.js';
import type { DraftRow } from './write.queries.js';
import { draftTurns } from './write.queries.js';
import { spokenTurns } from './written-turns.js';
import { WRITTEN_ACTIONS } from './write.schema.js';
import { DRAFT_CONFLICT } from './write-session.js';

// The writer's page (views/write/write.ejs): the scenario, both characters with their goals and secrets, and the
// conversation as written so far, rendered by the server (every text escaped) so that a reload shows what was saved.

const ACTION_LABELS: Record<(typeof WRITTEN_ACTIONS)[number], string> = {
  speak: 'says',
  'non-verbal': 'gesture or expression',
  action: 'does',
  leave: 'leaves the conversation',
};

/** The writing page, or the way to the end when there is nothing to write (the cast left the library). */
export function writePage(lp: LivePages, res: Response, b: BatchRow, rater: RaterRow, draft: DraftRow, error: { status: number; message: string } | null = null): void {
  const { settings } = batchOf(res);
  const write = writeOf(settings);
  const view = buildWriterView(lp.pages.deps.db, draft);
  if (!write || !view) {
    seeOther(res, lp.pages.withToken(lp.path(b, 'write/done'), rater));
    return;
  }
  const turns = draftTurns(draft);
  res.status(error?.status ?? 200).render('write/write', {
    ...lp.locals(res, rater, 'Write the conversation'),
    view,
    turns,
    version: draft.version,
    tab: draft.tab ?? '',
    conflictMessage: DRAFT_CONFLICT,
    writing: write.writing,
    spoken: spokenTurns(turns),
    actions: WRITTEN_ACTIONS.map((value) => ({ value, label: ACTION_LABELS[value] })),
    textMax: TURN_TEXT_MAX,
    urls: { draft: lp.path(b, 'write/draft'), submit: lp.path(b, 'write/submit') },
    error: error?.message ?? null,
  });
}
