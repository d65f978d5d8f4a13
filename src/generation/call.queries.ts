import { createHash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/connection.js';
import type { ChatRequest } from './llm-client.js';

/** A place of a dialogue where a call is made: one turn (0 for a SCRIPT dialogue) of one generation. */
export type CallPlace = { runId: number; dialogueId: number; turnIdx: number; speaker: 1 | 2 | null; generation: number };

export type CallStatus = 'ok' | 'invalid' | 'http_error' | 'network_error' | 'timeout';

/** The columns of a call row that llm_calls and evaluation_calls share; each table adds the place it belongs to. */
export type CallColumns = {
  id: number;
  attempt: number;
  request_hash: string;
  request: string;
  response: string | null;
  status: CallStatus;
  error: string | null;
  http_status: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
  created_at: string;
  /** The OpenAI batch whose output answered this call (--batch-api); null for a chat call. */
  provider_batch_id: string | null;
  /** The endpoint's base URL the call was sent to (without credentials); null for calls stored before it was kept. */
  base_url: string | null;
};

/** What the model-call runner stores of one call (the shared columns); each table adds the place. */
export type CallRecord = {
  attempt: number;
  requestHash: string;
  request: string;
  response: unknown;
  status: CallStatus;
  error: string | null;
  httpStatus: number | null;
  promptTokens: number;
  completionTokens: number;
  latencyMs: number;
  providerBatchId: string | null;
  /** The endpoint's base URL the call was sent to, as endpointAddress shows it. */
  baseUrl: string | null;
};

export type StoredCall = Pick<CallColumns, 'id' | 'attempt' | 'status' | 'request_hash' | 'response' | 'provider_batch_id'> & {
  /** The generation of the dialogue the call belongs to; evaluation calls have one generation. */
  generation?: number;
};

/**
 * The provenance rows of one place: generation keeps them in llm_calls, evaluation in evaluation_calls. The runner
 * reads and writes calls through this alone, so that both tables get the same rows by the same code.
 */
export type CallLedger = {
  /** Named in the message when a stored answer cannot be read. */
  table: string;
  /** Every call stored at this place, by attempt (earlier generations included: attempt numbers go on). */
  list(): StoredCall[];
  insert(record: CallRecord, now: Date): number;
};

/** The stored text of an answer: its JSON, or NULL when there was none. */
export function responseJson(response: unknown): string | null {
  return response === undefined || response === null ? null : JSON.stringify(response);
}

export type CallRow = CallColumns & {
  run_id: number;
  dialogue_id: number;
  turn_idx: number;
  speaker: number | null;
  /** The dialogue's generation this call belongs to (a failed dialogue generated again starts a new one). */
  generation: number;
};

const CALL_COLUMNS =
  'id, run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, error, http_status, prompt_tokens, completion_tokens, latency_ms, created_at, generation, provider_batch_id, base_url';

/**
 * The request as stored and hashed: its JSON in the order it is sent (key order matters to structured outputs,
 * which generate properties in schema order). Requests are built by one deterministic function, so the same
 * request always has the same text and hash.
 */
export function requestJson(request: ChatRequest): string {
  return JSON.stringify(request);
}

export function hashRequestJson(json: string): string {
  return createHash('sha256').update(json).digest('hex');
}

export function requestHash(request: ChatRequest): string {
  return hashRequestJson(requestJson(request));
}

export type NewCall = Omit<CallRecord, 'request' | 'providerBatchId' | 'baseUrl'> & {
  runId: number;
  dialogueId: number;
  turnIdx: number;
  speaker: 1 | 2 | null;
  /** The request, or its JSON text already made for the hash. */
  request: ChatRequest | string;
  /** Default 1. */
  generation?: number;
  /** Default null. */
  providerBatchId?: string | null;
  /** Default null. */
  baseUrl?: string | null;
};

const INSERTED_COLUMNS = `run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, error,
     http_status, prompt_tokens, completion_tokens, latency_ms, created_at, generation, provider_batch_id`;
const INSERTED_VALUES = `:runId, :dialogueId, :turnIdx, :speaker, :attempt, :requestHash, :request, :response, :status, :error,
     :httpStatus, :promptTokens, :completionTokens, :latencyMs, :now, :generation, :providerBatchId`;
const INSERT_CALL = `INSERT INTO llm_calls (${INSERTED_COLUMNS}) VALUES (${INSERTED_VALUES})`;
const INSERT_CALL_AT = `INSERT INTO llm_calls (${INSERTED_COLUMNS}, base_url) VALUES (${INSERTED_VALUES}, :baseUrl)`;
const CALLS_AT = `SELECT ${CALL_COLUMNS} FROM llm_calls WHERE dialogue_id = :dialogueId AND turn_idx = :turnIdx ORDER BY attempt`;

/**
 * The statements the engine runs on every call, prepared once per run: preparing SQL costs more than running it
 * (scripts/bench/generation.ts). Each is prepared at its first use, and a call without an address is stored without
 * naming base_url, so that writing calls also works on a database before migration 038 (as tests of older migrations do).
 */
export function createCallStore(db: Db) {
  let insert: Statement | undefined;
  let insertAt: Statement | undefined;
  let listAt: Statement<{ dialogueId: number; turnIdx: number }, CallRow> | undefined;
  const store = {
    insertCall(call: NewCall, now: Date): number {
      const params = {
        ...call,
        generation: call.generation ?? 1,
        providerBatchId: call.providerBatchId ?? null,
        baseUrl: call.baseUrl ?? null,
        request: typeof call.request === 'string' ? call.request : requestJson(call.request),
        response: responseJson(call.response),
        now: now.toISOString(),
      };
      const statement = params.baseUrl === null ? (insert ??= db.prepare(INSERT_CALL)) : (insertAt ??= db.prepare(INSERT_CALL_AT));
      return Number(statement.run(params).lastInsertRowid);
    },
    /** The calls already made for one place of a dialogue, by attempt. */
    listCallsAt(dialogueId: number, turnIdx: number): CallRow[] {
      listAt ??= db.prepare<{ dialogueId: number; turnIdx: number }, CallRow>(CALLS_AT);
      return listAt.all({ dialogueId, turnIdx });
    },
    /** The provenance rows of one place of a dialogue, as the model-call runner reads and writes them. */
    ledgerAt(place: CallPlace): CallLedger {
      return {
        table: 'llm_calls',
        list: () => store.listCallsAt(place.dialogueId, place.turnIdx),
        insert: (call, now) => store.insertCall({ ...place, ...call }, now),
      };
    },
  };
  return store;
}
export type CallStore = ReturnType<typeof createCallStore>;

export function insertCall(db: Db, call: NewCall, now: Date): number {
  return createCallStore(db).insertCall(call, now);
}

export function listCallsAt(db: Db, dialogueId: number, turnIdx: number): CallRow[] {
  return createCallStore(db).listCallsAt(dialogueId, turnIdx);
}

export function listDialogueCalls(db: Db, dialogueId: number): CallRow[] {
  return db
    .prepare<{ dialogueId: number }, CallRow>(
      `SELECT ${CALL_COLUMNS} FROM llm_calls WHERE dialogue_id = :dialogueId ORDER BY turn_idx, attempt`,
    )
    .all({ dialogueId });
}

/** One endpoint a run's calls were sent to: its calls, the valid ones, and the dialogues it answered at least once. */
export type RunEndpoint = { base_url: string | null; calls: number; ok: number; dialogues: number };

/** The base URLs a run's calls went to, in the order first used (NULL: calls stored before the address was kept). */
export function listRunEndpoints(db: Db, runId: number): RunEndpoint[] {
  return db
    .prepare<{ runId: number }, RunEndpoint>(
      // From the counters kept with the calls (migration 083): a row per endpoint and one per dialogue it answered.
      `SELECT nullif(t.base_url, '') AS base_url, t.calls, t.ok,
         (SELECT count(*) FROM run_endpoint_dialogues d WHERE d.run_id = t.run_id AND d.base_url = t.base_url AND d.ok > 0) AS dialogues
       FROM run_endpoint_totals t WHERE t.run_id = :runId ORDER BY t.first_call_id`,
    )
    .all({ runId });
}

export type CallTotals = { calls: number; ok: number; invalid: number; errors: number; prompt_tokens: number; completion_tokens: number };

export function runCallTotals(db: Db, runId: number): CallTotals {
  return db
    .prepare<{ runId: number }, CallTotals>(
      // Kept by triggers (migration 024): summing the calls reads each one's whole request and response.
      `SELECT calls, ok_calls AS ok, invalid_calls AS invalid, calls - ok_calls - invalid_calls AS errors, prompt_tokens, completion_tokens
       FROM run_totals WHERE run_id = :runId`,
    )
    .get({ runId }) ?? { calls: 0, ok: 0, invalid: 0, errors: 0, prompt_tokens: 0, completion_tokens: 0 };
}
