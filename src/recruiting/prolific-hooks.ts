import { RecruitingError, requirePlatformBatch } from './platform-deps.js';
import { PlatformError, withPlatformErrors } from './platform-error.js';
import { withPlatformLock } from './platform-lock.js';
import { runPlatformOperation } from './platform-operation.js';
import { listBatchOperations } from './platform-operations.queries.js';
import type { ProlificClient } from './prolific-client.js';
import { operationDeps, type ProlificDeps, requireClient } from './prolific-deps.js';
import { checkOperation } from './prolific-reconcile.js';
import { PROLIFIC_WEBHOOK_PATH } from './prolific-webhook.routes.js';

// `simarena prolific hooks <batch>`: subscribes the batch's workspace to Prolific's submission.status.change webhook,
// pointed at this server's POST /hooks/prolific (docs.prolific.com, Webhooks, "Subscribing": a workspace secret, a
// subscription whose answer carries an X-Hook-Secret header, and its confirmation with that header's value). Each
// request is a ledger operation of the batch that asked; a subscription is the workspace's, so a second batch finds it.

export const HOOK_EVENT = 'submission.status.change';

export type HooksResult = { workspaceId: string; targetUrl: string; subscriptionId: string; already: boolean; createdSecret: string | null };

/** The workspace: PROLIFIC_WORKSPACE_ID, or the token's only one. */
async function workspaceIdOf(client: ProlificClient, deps: ProlificDeps): Promise<string> {
  if (deps.config.prolificWorkspaceId) return deps.config.prolificWorkspaceId;
  const all = await client.listWorkspaces();
  const [only] = all;
  if (all.length !== 1 || !only) throw new RecruitingError(`The Prolific token has ${all.length} workspaces: set PROLIFIC_WORKSPACE_ID to the one the batch's study is paid from.`, 409);
  return only.id;
}

/** The workspace's secret: made here only when asked (it replaces any other integration's); shown once, never stored. */
async function secretOf(client: ProlificClient, deps: ProlificDeps, batchId: number, workspaceId: string, createSecret: boolean): Promise<string | null> {
  if (deps.config.prolificWebhookSecret() && !createSecret) return null;
  if (!createSecret) {
    throw new RecruitingError(
      'PROLIFIC_WEBHOOK_SECRET is not set: set it to the workspace secret Prolific signs webhooks with, or run with --create-secret to create one (Prolific keeps one secret per workspace: a new one replaces any other integration\'s).',
      400,
    );
  }
  let value: string | null = null;
  // Each --create-secret makes a new one; one whose answer was lost is reconciled first (its key is the next number).
  const made = listBatchOperations(deps.db, batchId, 'prolific').filter((o) => o.kind === 'hook_secret' && o.state === 'confirmed').length;
  await runPlatformOperation(
    {
      operation: { platform: 'prolific', batchId, kind: 'hook_secret', idempotencyKey: `prolific:workspace:${workspaceId}:hook_secret:${batchId}:${made + 1}`, request: { workspace_id: workspaceId }, actor: deps.actor },
      send: async () => {
        const secret = await client.createHookSecret(workspaceId);
        value = secret.value;
        return secret;
      },
      // The value is a secret: only its id is kept.
      answerOf: (s) => ({ answer: { id: s.id ?? null }, platformObjectId: s.id ?? null }),
      check: checkOperation(client, deps),
    },
    operationDeps(deps),
  );
  if (!value) throw new PlatformError('Prolific made the secret but its answer was lost: list it on Prolific (List all secrets) and set PROLIFIC_WEBHOOK_SECRET to it.', 502);
  return value;
}

async function subscribe(client: ProlificClient, deps: ProlificDeps, batchId: number, workspaceId: string, targetUrl: string): Promise<string> {
  const request = { workspace_id: workspaceId, event_type: HOOK_EVENT, target_url: targetUrl };
  let confirmSecret: string | null = null;
  const created = await runPlatformOperation(
    {
      operation: { platform: 'prolific', batchId, kind: 'hook_subscribe', idempotencyKey: `prolific:workspace:${workspaceId}:hook_subscribe:${targetUrl}`, request, actor: deps.actor },
      send: async () => {
        const answer = await client.createHookSubscription(request);
        confirmSecret = answer.confirmSecret;
        return answer;
      },
      answerOf: (a) => ({ answer: { id: a.id }, platformObjectId: a.id }),
      check: checkOperation(client, deps),
    },
    operationDeps(deps),
  );
  const id = created.operation.platform_object_id;
  if (!id || !confirmSecret) {
    throw new PlatformError(`Prolific made the subscription${id ? ` ${id}` : ''} but its confirmation secret (X-Hook-Secret) was not received: delete it on Prolific (Delete a subscription), then run this again.`, 502);
  }
  const secret: string = confirmSecret;
  await runPlatformOperation(
    {
      operation: { platform: 'prolific', batchId, kind: 'hook_confirm', idempotencyKey: `prolific:hook:${id}:hook_confirm`, platformObjectId: id, request: { subscription_id: id }, actor: deps.actor },
      send: () => client.confirmHookSubscription(id, secret),
      answerOf: (s) => ({ answer: { is_enabled: s.is_enabled ?? null } }),
      check: checkOperation(client, deps),
    },
    { ...operationDeps(deps), secrets: [...operationDeps(deps).secrets, secret] },
  );
  return id;
}

/** Subscribes the workspace to submission.status.change at PUBLIC_URL/hooks/prolific, once. */
export function subscribeProlificHooks(deps: ProlificDeps, batchId: number, options: { createSecret: boolean }): Promise<HooksResult> {
  return withPlatformErrors(async () => {
    requirePlatformBatch(deps.db, batchId, 'prolific');
    const targetUrl = `${deps.config.publicUrl}${PROLIFIC_WEBHOOK_PATH}`;
    // "Subscribing": target_url "must use https:// and be publicly accessible".
    if (!targetUrl.startsWith('https://')) throw new RecruitingError(`Prolific delivers webhooks only to a public https:// address; PUBLIC_URL is ${deps.config.publicUrl}.`, 400);
    const client = requireClient(deps.config);
    return withPlatformLock(deps.db, 'prolific', batchId, 'webhook subscription', deps.clock, async (lock) => {
      const locked = { ...deps, lock };
      const workspaceId = await workspaceIdOf(client, locked);
      const createdSecret = await secretOf(client, locked, batchId, workspaceId, options.createSecret);
      const existing = (await client.listHookSubscriptions()).find((s) => s.target_url === targetUrl && s.event_type === HOOK_EVENT && s.workspace_id === workspaceId && s.is_enabled !== false && s.id);
      if (existing?.id) return { workspaceId, targetUrl, subscriptionId: existing.id, already: true, createdSecret };
      const subscriptionId = await subscribe(client, locked, batchId, workspaceId, targetUrl);
      return { workspaceId, targetUrl, subscriptionId, already: false, createdSecret };
    });
  });
}
