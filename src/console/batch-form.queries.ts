import type { Db } from '../db/connection.js';

export type RunChoice = { id: number; name: string; kind: string; state: string; conditions: string[]; complete: number };

/** Runs a batch may draw from, with the conditions (MODE:model) of their completed dialogues. */
export function listRunChoices(db: Db): RunChoice[] {
  return db
    .prepare<[], { id: number; name: string; kind: string; state: string; conditions: string | null; complete: number }>(
      `SELECT r.id, r.name, r.kind, r.state,
         (SELECT group_concat(condition, '|') FROM (SELECT DISTINCT d.mode || ':' || d.model AS condition FROM dialogues d
            WHERE d.run_id = r.id AND d.state = 'complete' AND d.origin <> 'derived' ORDER BY condition)) AS conditions,
         (SELECT count(*) FROM dialogues d WHERE d.run_id = r.id AND d.state = 'complete') AS complete
       FROM runs r ORDER BY r.id DESC`,
    )
    .all()
    .map((r) => ({ ...r, conditions: r.conditions ? r.conditions.split('|') : [] }));
}

export type BlockChoice = { id: number; name: string; state: string; provider: string; participants: number };

/** Batches whose participants a batch may turn away, with how many recognisable (provider-id) raters each has. */
export function listBlockChoices(db: Db, exceptBatchId: number | null): BlockChoice[] {
  return db
    .prepare<{ except: number }, BlockChoice>(
      `SELECT b.id, b.name, b.state, coalesce(json_extract(b.settings, '$.provider.kind'), 'link') AS provider,
         (SELECT count(DISTINCT r.participant_id) FROM raters r WHERE r.batch_id = b.id AND r.provider <> 'link') AS participants
       FROM batches b WHERE b.id <> :except ORDER BY b.id DESC`,
    )
    .all({ except: exceptBatchId ?? 0 });
}
