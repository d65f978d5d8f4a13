import type { Db } from '../db/connection.js';
import { BatchError } from './batch-error.js';
import { listBatchIdsNamed } from './batch.queries.js';

/** The code of the refusal below: a channel that can point at the name's own field (the console's form) does. */
export const NAME_TAKEN = 'name_taken';

/** "batch 3" or "batches 3 and 5", for messages about the batches that have a name. */
export function batchesWithIds(ids: readonly number[]): string {
  if (ids.length === 1) return `batch ${ids[0]}`;
  return `batches ${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]}`;
}

/**
 * Refuses a name another batch has (issue 49): every command that names a batch by its name (batch-ref.ts) needs it to
 * be one batch's. `exceptId` is the batch being renamed, which may keep its own name. Migration 046's triggers hold the
 * same rule for any writer; this says it in words first.
 */
export function requireFreeBatchName(db: Db, name: string, exceptId?: number): void {
  const others = listBatchIdsNamed(db, name).filter((id) => id !== exceptId);
  if (others.length === 0) return;
  const holder = batchesWithIds(others);
  throw new BatchError(`The name "${name}" is taken by ${holder}; give this batch another name.`, 409, NAME_TAKEN);
}

/** The name a clone of `name` gets: "NAME (copy)", or "NAME (copy 2)", "(copy 3)", ... when that one is taken. */
export function freeCopyName(db: Db, name: string): string {
  for (let n = 1; ; n += 1) {
    const candidate = n === 1 ? `${name} (copy)` : `${name} (copy ${n})`;
    if (listBatchIdsNamed(db, candidate).length === 0) return candidate;
  }
}
