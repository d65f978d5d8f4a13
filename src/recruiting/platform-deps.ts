import type { BatchView } from '../batches/batch.commands.js';
import { getBatch } from '../batches/batch.commands.js';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import type { PlatformOperationRow } from './platform-operations.queries.js';
import { UserFacingError } from '../errors/user-facing-error.js';

/** A request simarena refuses before calling a platform (no pay, no token, wrong provider...). */
export class RecruitingError extends UserFacingError {}

/** What a platform's workflows (publish, status, settle) need: the database, the config, the time, who acts. */
export type PlatformDeps = { db: Db; config: Config; clock: () => Date; actor: string; onSend?: (op: PlatformOperationRow) => void };

const PROVIDER_NAMES = { prolific: 'Prolific', mturk: 'MTurk' } as const;

/** The batch a platform command acts on, refused when it does not exist or is set up for another provider. */
export function requirePlatformBatch(db: Db, batchId: number, kind: keyof typeof PROVIDER_NAMES): BatchView {
  const batch = getBatch(db, batchId);
  if (!batch) throw new RecruitingError(`No batch with id ${batchId}.`, 404);
  if (batch.settings.provider.kind !== kind) {
    throw new RecruitingError(`Batch ${batchId} is set up for ${batch.settings.provider.kind}, not ${PROVIDER_NAMES[kind]}: set "provider": { "kind": "${kind}" } first.`, 409);
  }
  return batch;
}
