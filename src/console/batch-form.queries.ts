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
