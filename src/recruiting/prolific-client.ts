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

export function createProlificClient(options: ProlificClientOptions) {
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const token = options.token;
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call<T extends z.ZodType>(method: 'GET' | 'POST', pathOrUrl: string, schema: T, body?: unknown): Promise<z.infer<T>> {
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
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new PlatformHttpError('prolific', 502, `${method} ${url.pathname}: the answer was not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new PlatformHttpError('prolific', 502, `${method} ${url.pathname}: unexpected answer (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    return parsed.data;
  }

  async function allPages<T extends z.ZodType>(path: string, item: T): Promise<z.infer<T>[]> {
    const out: z.infer<T>[] = [];
    for (let next: string | null | undefined = path; next; ) {
      const page: z.infer<ReturnType<typeof pageSchema<T>>> = await call('GET', next, pageSchema(item));
      out.push(...(page.results as z.infer<T>[]));
      next = page._links?.next?.href;
    }
    return out;
  }

  const anything = studySchema.partial().passthrough();
  return {
    getStudy: (id: string): Promise<ProlificStudy> => call('GET', `studies/${encodeURIComponent(id)}/`, studySchema),
    listStudies: (): Promise<ProlificStudy[]> => allPages('studies/', studySchema),
    createStudy: (study: NewStudy): Promise<ProlificStudy> => call('POST', 'studies/', studySchema, study),
    transitionStudy: (id: string, action: StudyAction): Promise<ProlificStudy> => call('POST', `studies/${encodeURIComponent(id)}/transition/`, studySchema, { action }),
    studyCost: async (reward: number, places: number): Promise<number> =>
      (await call('POST', 'study-cost-calculator/', costSchema, { reward, total_available_places: places })).total_cost,
    listSubmissions: (studyId: string): Promise<ProlificSubmission[]> => allPages(`studies/${encodeURIComponent(studyId)}/submissions/`, submissionSchema),
    getSubmission: (id: string): Promise<ProlificSubmission> => call('GET', `submissions/${encodeURIComponent(id)}/`, submissionSchema),
    /** APPROVE, or COMPLETE with a screen-out completion code (a paid screen-out). Idempotent on Prolific's side. */
    transitionSubmission: (id: string, body: { action: 'APPROVE' } | { action: 'COMPLETE'; completion_code: string }) =>
      call('POST', `submissions/${encodeURIComponent(id)}/transition/`, submissionSchema, body),
    bulkApprove: (submissionIds: readonly string[]) => call('POST', 'submissions/bulk-approve/', anything, { submission_ids: submissionIds }),
    requestReturn: (id: string, reasons: readonly string[]) =>
      call('POST', `submissions/${encodeURIComponent(id)}/request-return/`, anything, { request_return_reasons: reasons }),
    /** Sets up a bulk bonus (pays nothing): `participant_id,amount` lines, amounts in major units of the study's currency. */
    createBulkBonus: (studyId: string, csvBonuses: string): Promise<ProlificBulkBonus> =>
      call('POST', 'submissions/bonus-payments/', bulkBonusSchema, { study_id: studyId, csv_bonuses: csvBonuses }),
    /** Pays a bulk bonus. NOT idempotent on Prolific's side: every call pays again. */
    payBulkBonus: (id: string) => call('POST', `bulk-bonus-payments/${encodeURIComponent(id)}/pay/`, anything),
  };
}

export type ProlificClient = ReturnType<typeof createProlificClient>;
