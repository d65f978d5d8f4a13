import type { Db } from '../db/connection.js';

// Prolific's webhook deliveries acted on (migration 056), written only by src/recruiting/prolific-webhook.routes.ts.

export type WebhookEvent = { eventId: string; eventType: string; resourceId: string | null; status: string | null };

/** Records a delivery; false when its event id was recorded before (a redelivery: acknowledged, not acted on again). */
export function recordWebhookEvent(db: Db, event: WebhookEvent, now: Date): boolean {
  return (
    db
      .prepare(
        `INSERT INTO prolific_webhook_events (event_id, event_type, resource_id, status, received_at) VALUES (:eventId, :eventType, :resourceId, :status, :now)
         ON CONFLICT (event_id) DO NOTHING`,
      )
      .run({ ...event, now: now.toISOString() }).changes > 0
  );
}

export function setWebhookEventRater(db: Db, eventId: string, raterId: number): void {
  db.prepare('UPDATE prolific_webhook_events SET rater_id = :raterId WHERE event_id = :eventId').run({ eventId, raterId });
}

/** Batches published on Prolific: where a submission id (a Prolific session id) is looked for. */
export function listProlificStudyBatches(db: Db): number[] {
  return db.prepare<[], number>("SELECT batch_id FROM batch_platform_links WHERE platform = 'prolific' AND kind = 'study' ORDER BY batch_id").pluck().all();
}
