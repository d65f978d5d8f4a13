import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { resolveEndpoint } from './endpoints.js';
import { type ExecuteOptions, type RunOutcome, executeRun } from './execute-run.js';
import { GenerationInputError } from './generation-error.js';
import { createLlmClient } from './llm-client.js';
import { getRun } from './run.queries.js';

/**
 * Generates (or resumes) a run at the endpoint it was created for, with the key read from the environment
 * now. The web console starts runs in the background with this; `signal` pauses or cancels.
 */
export async function runAtEndpoint(
  db: Db,
  runId: number,
  options: { config: Config; env: Record<string, string | undefined> } & Omit<ExecuteOptions, 'llm' | 'apiKeyEnv'>,
): Promise<RunOutcome> {
  const run = getRun(db, runId);
  if (!run) throw new GenerationInputError(`no run with id ${runId}`);
  const { config, env, ...rest } = options;
  const endpoint = resolveEndpoint(config, env, run.endpoint_name ?? 'default', run.model ?? '');
  return executeRun(db, runId, { ...rest, llm: createLlmClient({ baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey }), apiKeyEnv: endpoint.apiKeyEnv });
}
