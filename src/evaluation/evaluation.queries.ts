import type { Db } from '../db/connection.js';
import { type CallColumns, type CallRecord, responseJson } from '../generation/call.queries.js';
import type { CallLedger } from '../generation/call.queries.js';
import type { Dimension } from './episode-output.schema.js';

export type EvaluationKind = 'episode' | 'pairwise';
export type EvaluationState = 'pending' | 'running' | 'paused' | 'complete' | 'failed';

export type EvaluationRow = {
  id: number;
  name: string;
  kind: EvaluationKind;
  run_id: number | null;
  batch_id: number | null;
  state: EvaluationState;
  judge_model: string;
  endpoint_name: string;
  base_url: string;
  temperature: number;
  prompt_version: string;
  prompt_hash: string;
  settings: string;
  provider_batch_id: string | null;
  provider_input_file_id: string | null;
  error: string | null;
  worker_pid: number | null;
  heartbeat_at: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
};

const EVALUATION_COLUMNS =
  'id, name, kind, run_id, batch_id, state, judge_model, endpoint_name, base_url, temperature, prompt_version, prompt_hash, settings, provider_batch_id, provider_input_file_id, error, worker_pid, heartbeat_at, created_by, created_at, started_at, finished_at';

export type NewEvaluation = {
  name: string;
  kind: EvaluationKind;
  runId: number | null;
  batchId: number | null;
  judgeModel: string;
  endpointName: string;
  baseUrl: string;
  temperature: number;
  promptVersion: string;
  promptHash: string;
  settings: unknown;
  createdBy: string;
};

export function insertEvaluation(db: Db, e: NewEvaluation, now: Date): number {
  const result = db
    .prepare(
      `INSERT INTO evaluations (name, kind, run_id, batch_id, state, judge_model, endpoint_name, base_url, temperature, prompt_version, prompt_hash, settings, created_by, created_at)
       VALUES (:name, :kind, :runId, :batchId, 'pending', :judgeModel, :endpointName, :baseUrl, :temperature, :promptVersion, :promptHash, :settings, :createdBy, :now)`,
    )
    .run({ ...e, settings: JSON.stringify(e.settings), now: now.toISOString() });
  return Number(result.lastInsertRowid);
}

export function evaluationNameTaken(db: Db, name: string): boolean {
  return db.prepare('SELECT 1 FROM evaluations WHERE name = :name').get({ name }) !== undefined;
}

export function getEvaluation(db: Db, id: number): EvaluationRow | undefined {
  return db.prepare<{ id: number }, EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE id = :id`).get({ id });
}

/** By id or name. */
export function findEvaluation(db: Db, idOrName: string): EvaluationRow | undefined {
  const byName = db.prepare<{ name: string }, EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE name = :name`).get({ name: idOrName });
  if (byName) return byName;
  return /^\d+$/.test(idOrName) ? getEvaluation(db, Number(idOrName)) : undefined;
}

export function listRunEvaluations(db: Db, runId: number): EvaluationRow[] {
  return db.prepare<{ runId: number }, EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE run_id = :runId ORDER BY id`).all({ runId });
}

export function listBatchLlmJudges(db: Db, batchId: number): EvaluationRow[] {
  return db
    .prepare<{ batchId: number }, EvaluationRow>(`SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE batch_id = :batchId AND kind = 'pairwise' ORDER BY id`)
    .all({ batchId });
}

export function deleteEvaluation(db: Db, id: number): void {
  db.transaction(() => {
    // Scores and judgments refer to calls; remove them before the calls (the cascade order is not guaranteed).
    db.prepare('DELETE FROM episode_scores WHERE evaluation_id = :id').run({ id });
    db.prepare('DELETE FROM episode_deals WHERE evaluation_id = :id').run({ id });
    db.prepare('DELETE FROM llm_judgments WHERE evaluation_id = :id').run({ id });
    db.prepare('DELETE FROM evaluation_calls WHERE evaluation_id = :id').run({ id });
    db.prepare('DELETE FROM evaluations WHERE id = :id').run({ id });
  })();
}

/** `baseUrl`: where this session sends its calls (a resume may send them to a new address). */
export function markEvaluationStarted(db: Db, id: number, pid: number, now: Date, baseUrl: string): void {
  db.prepare(
    `UPDATE evaluations SET state = 'running', error = NULL, worker_pid = :pid, heartbeat_at = :now, started_at = coalesce(started_at, :now), base_url = :baseUrl WHERE id = :id`,
  ).run({ id, pid, now: now.toISOString(), baseUrl });
}

export function touchEvaluationHeartbeat(db: Db, id: number, now: Date): void {
  db.prepare('UPDATE evaluations SET heartbeat_at = :now WHERE id = :id').run({ id, now: now.toISOString() });
}

export function finishEvaluation(db: Db, id: number, state: EvaluationState, error: string | null, now: Date): void {
  db.prepare('UPDATE evaluations SET state = :state, error = :error, worker_pid = NULL, finished_at = :now WHERE id = :id').run({ id, state, error, now: now.toISOString() });
}

export function updateEvaluationSettings(db: Db, id: number, settings: unknown): void {
  db.prepare('UPDATE evaluations SET settings = :settings WHERE id = :id').run({ id, settings: JSON.stringify(settings) });
}

export function setProviderBatch(db: Db, id: number, batch: { batchId: string | null; inputFileId: string | null }): void {
  db.prepare('UPDATE evaluations SET provider_batch_id = :batchId, provider_input_file_id = :inputFileId WHERE id = :id').run({ id, ...batch });
}

// Calls ----------------------------------------------------------------------

export type EvaluationCallRow = CallColumns & { evaluation_id: number; item: string; via: 'chat' | 'batch_api' };

const CALL_COLUMNS =
  'id, evaluation_id, item, attempt, via, provider_batch_id, request_hash, request, response, status, error, http_status, prompt_tokens, completion_tokens, latency_ms, created_at, base_url';

export type NewEvaluationCall = CallRecord & { evaluationId: number; item: string; via: 'chat' | 'batch_api' };

export function createEvaluationCallStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO evaluation_calls (evaluation_id, item, attempt, via, provider_batch_id, request_hash, request, response, status, error, http_status,
       prompt_tokens, completion_tokens, latency_ms, created_at, base_url)
     VALUES (:evaluationId, :item, :attempt, :via, :providerBatchId, :requestHash, :request, :response, :status, :error, :httpStatus,
       :promptTokens, :completionTokens, :latencyMs, :now, :baseUrl)`,
  );
  const listAt = db.prepare<{ evaluationId: number; item: string }, EvaluationCallRow>(
    `SELECT ${CALL_COLUMNS} FROM evaluation_calls WHERE evaluation_id = :evaluationId AND item = :item ORDER BY attempt`,
  );
  const store = {
    insertCall(call: NewEvaluationCall, now: Date): number {
      return Number(insert.run({ ...call, response: responseJson(call.response), now: now.toISOString() }).lastInsertRowid);
    },
    listCallsFor(evaluationId: number, item: string): EvaluationCallRow[] {
      return listAt.all({ evaluationId, item });
    },
    /** The provenance rows of one item, as the model-call runner reads and writes them: a Batch API answer is via 'batch_api'. */
    ledgerFor(evaluationId: number, item: string): CallLedger {
      return {
        table: 'evaluation_calls',
        list: () => store.listCallsFor(evaluationId, item),
        insert: (call, now) => store.insertCall({ evaluationId, item, via: call.providerBatchId === null ? 'chat' : 'batch_api', ...call }, now),
      };
    },
  };
  return store;
}
export type EvaluationCallStore = ReturnType<typeof createEvaluationCallStore>;

export type EvaluationTotals = { calls: number; ok: number; invalid: number; errors: number; prompt_tokens: number; completion_tokens: number };

export function evaluationCallTotals(db: Db, evaluationId: number): EvaluationTotals {
  return db
    .prepare<{ id: number }, EvaluationTotals>(
      `SELECT count(*) AS calls, coalesce(sum(status = 'ok'), 0) AS ok, coalesce(sum(status = 'invalid'), 0) AS invalid,
              coalesce(sum(status NOT IN ('ok', 'invalid')), 0) AS errors,
              coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens
       FROM evaluation_calls WHERE evaluation_id = :id`,
    )
    .get({ id: evaluationId }) as EvaluationTotals;
}

// Episode scores -------------------------------------------------------------

export type ScoreToStore = { speaker: 1 | 2; dimension: Dimension; score: number; reasoning: string };

/** One dialogue's scores (and deal) in one transaction, replacing what an earlier attempt stored. */
export function saveEpisodeScores(
  db: Db,
  evaluationId: number,
  dialogueId: number,
  callId: number,
  scores: ScoreToStore[],
  deal: { reached: boolean; price: number | null } | null,
): void {
  const insert = db.prepare(
    `INSERT OR REPLACE INTO episode_scores (evaluation_id, dialogue_id, speaker, dimension, score, reasoning, call_id)
     VALUES (:evaluationId, :dialogueId, :speaker, :dimension, :score, :reasoning, :callId)`,
  );
  db.transaction(() => {
    for (const s of scores) insert.run({ evaluationId, dialogueId, callId, ...s });
    if (deal)
      db.prepare(
        `INSERT OR REPLACE INTO episode_deals (evaluation_id, dialogue_id, reached, price, call_id) VALUES (:evaluationId, :dialogueId, :reached, :price, :callId)`,
      ).run({ evaluationId, dialogueId, callId, reached: deal.reached ? 1 : 0, price: deal.reached ? deal.price : null });
  })();
}

export function listScoredDialogueIds(db: Db, evaluationId: number): Set<number> {
  return new Set(
    db
      .prepare<{ id: number }, { dialogue_id: number }>('SELECT DISTINCT dialogue_id FROM episode_scores WHERE evaluation_id = :id')
      .all({ id: evaluationId })
      .map((r) => r.dialogue_id),
  );
}

export type EpisodeScoreRow = { dialogue_id: number; speaker: 1 | 2; dimension: Dimension; score: number; reasoning: string };

export function listEpisodeScores(db: Db, evaluationId: number): EpisodeScoreRow[] {
  return db
    .prepare<{ id: number }, EpisodeScoreRow>(
      'SELECT dialogue_id, speaker, dimension, score, reasoning FROM episode_scores WHERE evaluation_id = :id ORDER BY dialogue_id, speaker, dimension',
    )
    .all({ id: evaluationId });
}

export function listEpisodeDeals(db: Db, evaluationId: number): { dialogue_id: number; reached: number; price: number | null }[] {
  return db
    .prepare<{ id: number }, { dialogue_id: number; reached: number; price: number | null }>(
      'SELECT dialogue_id, reached, price FROM episode_deals WHERE evaluation_id = :id ORDER BY dialogue_id',
    )
    .all({ id: evaluationId });
}

// LLM judgments ---------------------------------------------------------------

export function saveLlmJudgment(
  db: Db,
  j: { evaluationId: number; pairId: number; leftSide: 'a' | 'b'; choice: 'left' | 'right' | 'tie'; reasoning: string; callId: number },
): void {
  const winner = j.choice === 'tie' ? 'tie' : j.choice === 'left' ? j.leftSide : j.leftSide === 'a' ? 'b' : 'a';
  db.prepare(
    `INSERT OR REPLACE INTO llm_judgments (evaluation_id, pair_id, left_side, choice, winner, reasoning, call_id)
     VALUES (:evaluationId, :pairId, :leftSide, :choice, :winner, :reasoning, :callId)`,
  ).run({ ...j, winner });
}

export type LlmJudgmentRow = { pair_id: number; left_side: 'a' | 'b'; choice: 'left' | 'right' | 'tie'; winner: 'a' | 'b' | 'tie'; reasoning: string };

export function listLlmJudgments(db: Db, evaluationId: number): LlmJudgmentRow[] {
  return db
    .prepare<{ id: number }, LlmJudgmentRow>(
      'SELECT pair_id, left_side, choice, winner, reasoning FROM llm_judgments WHERE evaluation_id = :id ORDER BY pair_id, left_side',
    )
    .all({ id: evaluationId });
}
