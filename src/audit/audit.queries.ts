import type { Db } from '../db/connection.js';

export type AuditEntry = {
  actor: string;
  action: string;
  targetType?: string;
  targetId?: string | number;
  details?: Record<string, unknown>;
};

export type AuditRow = { id: number; at: string; actor: string; action: string; target_type: string | null; target_id: string | null; details: string };

export function recordAudit(db: Db, entry: AuditEntry, at: Date): void {
  db.prepare(
    `INSERT INTO audit_log (at, actor, action, target_type, target_id, details)
     VALUES (:at, :actor, :action, :targetType, :targetId, :details)`,
  ).run({
    at: at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId === undefined ? null : String(entry.targetId),
    details: JSON.stringify(entry.details ?? {}),
  });
}

export function listAudit(db: Db, limit: number, beforeId?: number): AuditRow[] {
  return db
    .prepare<{ limit: number; beforeId: number }, AuditRow>(
      `SELECT id, at, actor, action, target_type, target_id, details FROM audit_log
       WHERE id < :beforeId ORDER BY id DESC LIMIT :limit`,
    )
    .all({ limit, beforeId: beforeId ?? Number.MAX_SAFE_INTEGER });
}
