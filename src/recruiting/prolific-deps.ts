import type { Config } from '../config.js';
import { type PlatformDeps, RecruitingError } from './platform-deps.js';
import type { HeldLock } from './platform-lock.js';
import type { OperationDeps } from './platform-operation.js';
import { createProlificClient, type ProlificClient } from './prolific-client.js';

// What every Prolific workflow (publish, status, settle, the study's transitions) needs: the client made from the
// configured token, and the ledger's dependencies with that token among the secrets redacted from whatever is stored.

/** `lock`: the batch's platform lock while a workflow holds it; nothing is sent once it was taken over. */
export type ProlificDeps = PlatformDeps & { lock?: HeldLock };

export function requireClient(config: Config): ProlificClient {
  const token = config.prolificToken();
  if (!token) throw new RecruitingError('PROLIFIC_API_TOKEN is not set: create a token in Prolific (Settings, "API tokens") and put it in the environment.', 400);
  return createProlificClient({ baseUrl: config.prolificApiUrl, token });
}

export function operationDeps(deps: ProlificDeps): OperationDeps {
  return { db: deps.db, clock: deps.clock, secrets: [deps.config.prolificToken() ?? ''], onSend: deps.onSend, beforeSend: deps.lock?.assertHeld };
}
