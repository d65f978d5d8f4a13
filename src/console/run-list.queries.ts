import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import { runModeNamesSchema } from '../generation/run-columns.schema.js';
import type { RunState } from '../generation/run.queries.js';

// Read-only SQL for the console's run pages and GET /api/runs.

export type RunListRow = {
  id: number;
  name: string;
  kind: string;
  state: RunState;
  model: string | null;
  modes: string;
  endpoint_name: string | null;
  samples: number;
  scenario_selector: string;
  error: string | null;
  created_by: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  heartbeat_at: string | null;
  worker_pid: number | null;
  simulation_card: string | null;
  dialogues: number;
  complete: number;
  failed: number;
  running: number;
  calls: number;
  failed_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number | null;
};

// The counts come from run_totals (migration 024), kept by triggers: counting a run's calls means reading each call's
// whole request and response, too slow for a page that polls (issue 12).
const RUN_LIST_SQL = `
  SELECT r.id, r.name, r.kind, r.state, r.model, r.modes, r.endpoint_name, r.samples, r.scenario_selector, r.error,
    r.created_by, r.created_at, r.started_at, r.finished_at, r.heartbeat_at, r.worker_pid, r.simulation_card,
    coalesce(t.dialogues, 0) AS dialogues, coalesce(t.complete, 0) AS complete, coalesce(t.failed, 0) AS failed, coalesce(t.running, 0) AS running,
    coalesce(t.calls, 0) AS calls, coalesce(t.calls - t.ok_calls, 0) AS failed_calls,
    coalesce(t.prompt_tokens, 0) AS prompt_tokens, coalesce(t.completion_tokens, 0) AS completion_tokens,
    CASE WHEN r.price_prompt_per_mtok IS NULL AND r.price_completion_per_mtok IS NULL THEN NULL
      ELSE (coalesce(t.prompt_tokens, 0) * coalesce(r.price_prompt_per_mtok, 0) + coalesce(t.completion_tokens, 0) * coalesce(r.price_completion_per_mtok, 0)) / 1e6
    END AS cost
  FROM runs r
  LEFT JOIN run_totals t ON t.run_id = r.id`;

export function listRunsWithCounts(db: Db, limit: number, offset: number): RunListRow[] {
  return db.prepare<{ limit: number; offset: number }, RunListRow>(`${RUN_LIST_SQL} ORDER BY r.id DESC LIMIT :limit OFFSET :offset`).all({ limit, offset });
}

export function countRuns(db: Db): number {
  return db.prepare('SELECT count(*) FROM runs').pluck().get() as number;
}

export function findRunWithCounts(db: Db, id: number): RunListRow | undefined {
  return db.prepare<{ id: number }, RunListRow>(`${RUN_LIST_SQL} WHERE r.id = :id`).get({ id });
}

export type RunDialogueRow = {
  id: number;
  scenario_id: string;
  sample_index: number;
  /** The cast's two characters by name (issue 40: a scenario's samples with different casts looked alike); null without a cast row. */
  character_1: string | null;
  character_2: string | null;
  mode: string;
  model: string;
  state: string;
  failure_reason: string | null;
  end_reason: string | null;
  turns: number;
};

/** A page of the run's dialogues, failed ones first; read in the order of index dialogues_run_page (migration 079). */
export function listRunDialogues(db: Db, runId: number, limit: number, offset: number): RunDialogueRow[] {
  return db
    .prepare<{ runId: number; limit: number; offset: number }, RunDialogueRow>(
      `SELECT d.id, d.scenario_id, d.sample_index, d.mode, d.model, d.state, d.failure_reason, d.end_reason,
         trim(c1.first_name || ' ' || c1.last_name) AS character_1, trim(c2.first_name || ' ' || c2.last_name) AS character_2,
         (SELECT count(*) FROM turns t WHERE t.dialogue_id = d.id) AS turns
       FROM dialogues d LEFT JOIN casts c ON c.id = d.cast_id
         LEFT JOIN characters c1 ON c1.id = c.character_1_id LEFT JOIN characters c2 ON c2.id = c.character_2_id
       WHERE d.run_id = :runId
       ORDER BY (d.state = 'failed') DESC, d.scenario_id, d.sample_index, d.mode LIMIT :limit OFFSET :offset`,
    )
    .all({ runId, limit, offset });
}

/** The published JSON shape of a run (API and the live run page). */
export function serializeRun(run: RunListRow) {
  return {
    id: run.id,
    name: run.name,
    kind: run.kind,
    state: run.state,
    model: run.model,
    modes: parseJsonColumn(runModeNamesSchema, run.modes, `runs.modes of run ${run.id}`),
    endpoint: run.endpoint_name,
    samples: run.samples,
    scenarios: run.scenario_selector,
    error: run.error,
    created_by: run.created_by,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    dialogues: { total: run.dialogues, complete: run.complete, failed: run.failed, in_progress: run.running },
    calls: { total: run.calls, failed: run.failed_calls },
    tokens: { prompt: run.prompt_tokens, completion: run.completion_tokens },
    cost: run.cost,
    has_simulation_card: run.simulation_card !== null,
  };
}
