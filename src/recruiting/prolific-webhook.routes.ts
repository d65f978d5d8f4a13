import express, { type Express, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { releaseRaterHolds } from '../rating/rater-flow.js';
import { findRaterBySession } from '../rating/rating.queries.js';
import { listProlificStudyBatches, recordWebhookEvent, setWebhookEventRater } from './prolific-webhook.queries.js';
import { isSignedByProlific } from './prolific-webhook-signature.js';

// POST /hooks/prolific: Prolific's submission.status.change webhook (issue 50, item 11). A participant who returns
// their submission or times out holds pairs until their lease lapses; the webhook frees them at once. Polling stays
// the fallback: a lapsed hold goes back to the pool on the next rater request or the server's periodic check whatever
// the webhook did. Anything unsigned or wrongly signed is refused with 401 before it is read; a delivery seen before
// (its X-Event-ID) is acknowledged and not acted on again. Prolific retries a delivery answered with a non-2xx "up to
// 11 additional times over a 24-hour period" (Event Delivery & Retry Logic), so an event simarena does not act on is
// still answered 200.

export const PROLIFIC_WEBHOOK_PATH = '/hooks/prolific';

/** docs.prolific.com, Webhooks, "Receiving": resource_id (the submission), event_type, participant_id, status. */
const eventSchema = z.looseObject({
  resource_id: z.string().trim().min(1).max(128).optional(),
  event_type: z.string().trim().min(1).max(100),
  participant_id: z.string().trim().max(128).optional(),
  status: z.string().trim().min(1).max(64).optional(),
});

/** The new statuses that end a submission without the participant: their holds are freed. */
const RELEASING = ['RETURNED', 'TIMED-OUT'];

type WebhookDeps = { db: Db; config: Config; clock: Clock };

/** Acts on one signed event, once: records it and, for a returned or timed-out submission of a rater, frees their holds. */
function actOnEvent(db: Db, eventId: string, event: z.infer<typeof eventSchema>, now: Date): 'duplicate' | 'released' | 'ignored' {
  return db
    .transaction(() => {
      if (!recordWebhookEvent(db, { eventId, eventType: event.event_type, resourceId: event.resource_id ?? null, status: event.status ?? null }, now)) return 'duplicate';
      if (event.event_type !== 'submission.status.change' || !event.resource_id || !RELEASING.includes(event.status ?? '')) return 'ignored';
      for (const batchId of listProlificStudyBatches(db)) {
        const rater = findRaterBySession(db, batchId, 'prolific', event.resource_id);
        if (!rater) continue;
        releaseRaterHolds(db, rater.id);
        setWebhookEventRater(db, eventId, rater.id);
        return 'released';
      }
      return 'ignored';
    })
    .immediate();
}

function receive({ db, config, clock }: WebhookDeps) {
  return (req: Request, res: Response) => {
    res.set('Cache-Control', 'no-store');
    const secret = config.prolificWebhookSecret();
    if (!secret) {
      res.status(503).json({ error: 'Prolific webhooks are not set up on this server: set PROLIFIC_WEBHOOK_SECRET to the workspace secret.' });
      return;
    }
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!isSignedByProlific(secret, { signature: req.get('x-prolific-request-signature'), timestamp: req.get('x-prolific-request-timestamp') }, body)) {
      res.status(401).json({ error: 'This request is not signed with the workspace secret Prolific signs its webhooks with.' });
      return;
    }
    const eventId = req.get('x-event-id')?.trim();
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      json = null;
    }
    const event = eventSchema.safeParse(json);
    if (!eventId || eventId.length > 200 || !event.success) {
      res.status(400).json({ error: 'A Prolific event needs an X-Event-ID header and a JSON body with its event_type.' });
      return;
    }
    res.status(200).json({ outcome: actOnEvent(db, eventId, event.data, clock()) });
  };
}

/** Mounts the webhook: the raw body (the signature covers its bytes), at most 64 KB, never a form or a session. */
export function mountProlificWebhook(app: Express, deps: WebhookDeps): void {
  app.post(PROLIFIC_WEBHOOK_PATH, express.raw({ type: () => true, limit: '64kb' }), receive(deps));
}
