import type { Db } from '../db/connection.js';
import { BatchError } from './batch-error.js';
import { listBatchIdsNamed } from './batch.queries.js';

/**
 * The one rule by which a person names a batch (every CLI command's `--batch`, `ID` and `--batches`, issue 40): its
 * numeric id, its public id (the rater link's), or its name when one batch alone has it. A new batch may no longer take
 * a name another has (issue 49, batch-name.ts), but a database made before that may hold batches of one name: such a
 * name is refused with their ids rather than one of them taken silently.
 */
export function resolveBatchRef(db: Db, ref: string): number {
  const text = ref.trim();
  if (text === '') throw new BatchError('A batch is named by its id or its name (see "simarena batches list"); none was given.');
  if (/^\d+$/.test(text)) {
    const byId = db.prepare<{ id: number }, number>('SELECT id FROM batches WHERE id = :id').pluck().get({ id: Number(text) });
    if (byId !== undefined) return byId;
  }
  const byPublicId = db.prepare<{ ref: string }, number>('SELECT id FROM batches WHERE public_id = :ref').pluck().get({ ref: text });
  if (byPublicId !== undefined) return byPublicId;
  const named = listBatchIdsNamed(db, text);
  if (named.length === 1) return named[0] as number;
  if (named.length > 1) throw new BatchError(`${named.length} batches are named "${text}" (ids ${named.join(', ')}); give the id of the one you mean.`, 409);
  throw new BatchError(`No batch has the id or name "${text}" (see "simarena batches list").`, 404);
}
