import { createHash } from 'node:crypto';
import type { Db } from '../db/connection.js';
import type { ChatRequest } from './llm-client.js';
import type { CallLedger } from './model-call.js';

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
  'id, run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, error, http_status, prompt_tokens, completion_tokens, latency_ms, created_at, generation, provider_batch_id';

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

export type NewCall = Omit<CallRecord, 'request' | 'providerBatchId'> & {
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
};

const INSERT_CALL = `INSERT INTO llm_calls (run_id, dialogue_id, turn_idx, speaker, attempt, request_hash, request, response, status, error,
     http_status, prompt_tokens, completion_tokens, latency_ms, created_at, generation, provider_batch_id)
   VALUES (:runId, :dialogueId, :turnIdx, :speaker, :attempt, :requestHash, :request, :response, :status, :error,
     :httpStatus, :promptTokens, :completionTokens, :latencyMs, :now, :generation, :providerBatchId)`;
const CALLS_AT = `SELECT ${CALL_COLUMNS} FROM llm_calls WHERE dialogue_id = :dialogueId AND turn_idx = :turnIdx ORDER BY attempt`;

/**
 * The two statements the engine runs on every call, prepared once per run: preparing SQL costs more than
 * running it (scripts/bench/generation.ts).
 */
export function createCallStore(db: Db) {
  const insert = db.prepare(INSERT_CALL);
  const listAt = db.prepare<{ dialogueId: number; turnIdx: number }, CallRow>(CALLS_AT);
  const store = {
    insertCall(call: NewCall, now: Date): number {
      const result = insert.run({
        ...call,
        generation: call.generation ?? 1,
        providerBatchId: call.providerBatchId ?? null,
        request: typeof call.request === 'string' ? call.request : requestJson(call.request),
        response: responseJson(call.response),
        now: now.toISOString(),
      });
      return Number(result.lastInsertRowid);
    },
    /** The calls already made for one place of a dialogue, by attempt. */
    listCallsAt(dialogueId: number, turnIdx: number): CallRow[] {
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
