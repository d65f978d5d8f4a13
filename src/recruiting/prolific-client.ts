import type { z } from 'zod';
import { PlatformHttpError } from './platform-error.js';
import {
  bulkBonusSchema,
  costSchema,
  errorBodySchema,
  pageSchema,
  type ProlificBulkBonus,
  type ProlificStudy,
  type ProlificSubmission,
  studySchema,
  submissionSchema,
  workspaceBalanceSchema,
  workspaceSchema,
  createdSubscriptionSchema,
  hookListSchema,
  hookSecretSchema,
  hookSubscriptionSchema,
} from './prolific.schema.js';
import { redactText } from './redact-secrets.js';

// A small typed client of Prolific's public REST API (https://docs.prolific.com/api-reference), over fetch, each answer
// parsed with zod. The token goes only into the Authorization header of requests to the configured base URL; it is
// never part of an error, and a `next` link to another host is not followed.

export type ProlificClientOptions = {
  /** The API base, ending in /api/v1/ (PROLIFIC_API_URL). */
  baseUrl: string;
  token: string;
  /** A request without an answer after this long counts as no answer (status 0). */
  timeoutMs?: number;
};

export type StudyAction = 'PUBLISH' | 'PAUSE' | 'START' | 'STOP';

/** A completion code of a study: what the participant enters, and what Prolific does with it. */
export type CompletionCodeSpec = {
  code: string;
  code_type: string;
  actor: 'participant' | 'researcher';
  actions: ({ action: 'AUTOMATICALLY_APPROVE' | 'MANUALLY_REVIEW' | 'REQUEST_RETURN' } | { action: 'FIXED_SCREEN_OUT_PAYMENT'; fixed_screen_out_reward: number; slots: number })[];
};

export type NewStudy = {
  name: string;
  internal_name: string;
  description: string;
  external_study_url: string;
  prolific_id_option: 'url_parameters';
  completion_codes: CompletionCodeSpec[];
  total_available_places: number;
  estimated_completion_time: number;
  reward: number;
  device_compatibility: ('desktop' | 'tablet' | 'mobile')[];
  peripheral_requirements: string[];
};

async function platformMessage(res: Response, token: string): Promise<string> {
  const text = await res.text().catch(() => '');
  let message = text.slice(0, 500);
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const body = parsed.data;
      const detail = body.error?.detail ?? body.detail;
      const detailText = typeof detail === 'string' ? detail : Array.isArray(detail) ? detail.join('; ') : detail ? JSON.stringify(detail) : '';
      const joined = [body.error?.title, detailText].filter(Boolean).join(': ');
      if (joined) message = joined;
    }
  } catch {
    // Not JSON: the text itself is the message.
  }
  return redactText(message || res.statusText || 'no message', [token]);
}

function retryAfterSeconds(res: Response): number | null {
  const header = res.headers.get('retry-after');
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, Math.ceil((date - Date.now()) / 1000)) : null;
}

/**
 * A write's answer: any 2xx means Prolific took the request, whatever its body. Prolific answers some writes with a
 * JSON string (bulk approve: 200 "The request to bulk approve has been made successfully."; pay: 202 "... is being
 * processed asynchronously", docs.prolific.com, Bulk approve submissions and Pay bonuses) or with nothing its own CLI
 * reads (prolific-oss/cli, client.go: BulkApproveSubmissions and PayBonusPayments decode no body). The body is kept as
 * it came (an object, a string, or null when empty), for the ledger; what was done is read from Prolific's state.
 */
export type WriteAnswer = { status: number; body: unknown };

/** The status a write's answer names, when it is an object that names one (a study or a submission). */
export function statusInAnswer(answer: WriteAnswer): string | null {
  const body = answer.body;
  return body !== null && typeof body === 'object' && 'status' in body && typeof body.status === 'string' ? body.status : null;
}

type Reader = <T extends z.ZodType>(method: 'GET' | 'POST', pathOrUrl: string, schema: T, body?: unknown) => Promise<z.infer<T>>;
type HeaderReader = <T extends z.ZodType>(method: 'GET' | 'POST', pathOrUrl: string, schema: T, body?: unknown) => Promise<{ data: z.infer<T>; headers: Headers }>;

/** Webhooks (docs.prolific.com, API reference, Webhooks): the workspace's one secret, subscriptions and their confirmation. */
function hooksApi(read: Reader, readWithHeaders: HeaderReader) {
  return {
    listHookSecrets: async () => (await read('GET', 'hooks/secrets/', hookListSchema(hookSecretSchema))).results,
    /** Creates the workspace's secret, replacing any other ("one active secret per workspace at a time"). */
    createHookSecret: (workspaceId: string) => read('POST', 'hooks/secrets/', hookSecretSchema, { workspace_id: workspaceId }),
    listHookSubscriptions: async () => (await read('GET', 'hooks/subscriptions/', hookListSchema(hookSubscriptionSchema))).results,
    /** The subscription and the X-Hook-Secret header its confirmation needs ("Subscribing"). */
    createHookSubscription: async (s: { workspace_id: string; event_type: string; target_url: string }) => {
      const { data, headers } = await readWithHeaders('POST', 'hooks/subscriptions/', createdSubscriptionSchema, s);
      const id = data.id ?? data.results?.find((r) => r.target_url === s.target_url && r.event_type === s.event_type)?.id;
      return { id: id ?? null, confirmSecret: headers.get('x-hook-secret') };
    },
    confirmHookSubscription: (id: string, secret: string) => read('POST', `hooks/subscriptions/${encodeURIComponent(id)}/`, hookSubscriptionSchema, { secret }),
  };
}

export function createProlificClient(options: ProlificClientOptions) {
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const token = options.token;
  const timeoutMs = options.timeoutMs ?? 30_000;

  /** Sends a request; a non-2xx (or no answer) is thrown as a PlatformHttpError, a 2xx gives its body's text. */
  async function send(method: 'GET' | 'POST', pathOrUrl: string, body?: unknown): Promise<{ status: number; text: string; path: string; headers: Headers }> {
    const url = /^https?:/.test(pathOrUrl) ? new URL(pathOrUrl) : new URL(pathOrUrl.replace(/^\//, ''), base);
    if (url.origin !== base.origin) throw new PlatformHttpError('prolific', 0, `refused to follow a link to another host (${url.origin})`);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { Authorization: `Token ${token}`, Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const reason = error instanceof Error ? (error.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : error.message) : 'no answer';
      throw new PlatformHttpError('prolific', 0, redactText(`${method} ${url.pathname}: ${reason}`, [token]));
    }
    if (!res.ok) throw new PlatformHttpError('prolific', res.status, await platformMessage(res, token), retryAfterSeconds(res));
    // A 2xx whose body is cut off has been taken all the same: what is missing is only the answer.
    const text = await res.text().catch(() => '');
    return { status: res.status, text, path: url.pathname, headers: res.headers };
  }

  /** A read: its answer parsed with its schema (an answer of another shape is a 502, and a read is safe to send again). */
  async function read<T extends z.ZodType>(method: 'GET' | 'POST', pathOrUrl: string, schema: T, body?: unknown): Promise<z.infer<T>> {
    return (await readWithHeaders(method, pathOrUrl, schema, body)).data;
  }

  async function readWithHeaders<T extends z.ZodType>(method: 'GET' | 'POST', pathOrUrl: string, schema: T, body?: unknown): Promise<{ data: z.infer<T>; headers: Headers }> {
    const { text, path, headers } = await send(method, pathOrUrl, body);
    let json: unknown;
    try {
      json = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new PlatformHttpError('prolific', 502, `${method} ${path}: the answer was not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new PlatformHttpError('prolific', 502, `${method} ${path}: unexpected answer (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    return { data: parsed.data, headers };
  }

  /** A write: any 2xx is taken, whatever its body. */
  async function write(pathOrUrl: string, body?: unknown): Promise<WriteAnswer> {
    const { status, text } = await send('POST', pathOrUrl, body);
    if (text.trim() === '') return { status, body: null };
    try {
      return { status, body: JSON.parse(text) as unknown };
    } catch {
      return { status, body: redactText(text.slice(0, 500), [token]) };
    }
  }

  async function allPages<T extends z.ZodType>(path: string, item: T): Promise<z.infer<T>[]> {
    const out: z.infer<T>[] = [];
    for (let next: string | null | undefined = path; next; ) {
      const page: z.infer<ReturnType<typeof pageSchema<T>>> = await read('GET', next, pageSchema(item));
      out.push(...(page.results as z.infer<T>[]));
      next = page._links?.next?.href;
    }
    return out;
  }

  const submissionPath = (id: string, action = '') => `submissions/${encodeURIComponent(id)}/${action}`;
  return {
    listWorkspaces: () => allPages('workspaces/', workspaceSchema),
    /** The workspace's currency_code: the unit of every reward and bonus paid from it. */
    workspaceCurrency: async (workspaceId: string): Promise<string | null> => (await read('GET', `workspaces/${encodeURIComponent(workspaceId)}/balance/`, workspaceBalanceSchema)).currency_code ?? null,
    ...hooksApi(read, readWithHeaders),
    getStudy: (id: string): Promise<ProlificStudy> => read('GET', `studies/${encodeURIComponent(id)}/`, studySchema),
    listStudies: (): Promise<ProlificStudy[]> => allPages('studies/', studySchema),
    /** Its answer is the study, whose id is needed: an answer without one is a 502 (and the study is found by name). */
    createStudy: (study: NewStudy): Promise<ProlificStudy> => read('POST', 'studies/', studySchema, study),
    transitionStudy: (id: string, action: StudyAction): Promise<WriteAnswer> => write(`studies/${encodeURIComponent(id)}/transition/`, { action }),
    studyCost: async (reward: number, places: number): Promise<number> =>
      (await read('POST', 'study-cost-calculator/', costSchema, { reward, total_available_places: places })).total_cost,
    listSubmissions: (studyId: string): Promise<ProlificSubmission[]> => allPages(`studies/${encodeURIComponent(studyId)}/submissions/`, submissionSchema),
    getSubmission: (id: string): Promise<ProlificSubmission> => read('GET', submissionPath(id), submissionSchema),
    /** APPROVE, or COMPLETE with a completion code whose actor is the researcher. Idempotent on Prolific's side. */
    transitionSubmission: (id: string, body: { action: 'APPROVE' } | { action: 'COMPLETE'; completion_code: string }): Promise<WriteAnswer> => write(submissionPath(id, 'transition/'), body),
    /** Asynchronous: a 200 means Prolific will approve them; only their status APPROVED says it did. */
    bulkApprove: (submissionIds: readonly string[]): Promise<WriteAnswer> => write('submissions/bulk-approve/', { submission_ids: submissionIds }),
    requestReturn: (id: string, reasons: readonly string[]): Promise<WriteAnswer> => write(submissionPath(id, 'request-return/'), { request_return_reasons: reasons }),
    /** Sets up a bulk bonus (pays nothing): `participant_id,amount` lines, amounts in major units of the study's currency. */
    createBulkBonus: (studyId: string, csvBonuses: string): Promise<ProlificBulkBonus> =>
      read('POST', 'submissions/bonus-payments/', bulkBonusSchema, { study_id: studyId, csv_bonuses: csvBonuses }),
    /** Pays a bulk bonus, asynchronously. NOT idempotent on Prolific's side: every call pays again. */
    payBulkBonus: (id: string): Promise<WriteAnswer> => write(`bulk-bonus-payments/${encodeURIComponent(id)}/pay/`),
  };
}

export type ProlificClient = ReturnType<typeof createProlificClient>;
