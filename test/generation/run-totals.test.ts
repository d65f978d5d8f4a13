// Migration 024: a run's dialogue and call counts are kept by triggers (the console's run page polls them; counting
// the calls read each one's whole request and response). Checked against counts the test makes itself from the rows,
// after every kind of write the platform does: new dialogues and calls, state changes, retries, deletions, a new run.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRunWithCounts, listRunsWithCounts } from '../../src/console/run-list.queries.js';
import type { Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { insertCall, runCallTotals } from '../../src/generation/call.queries.js';
import { requeueFailedDialogues } from '../../src/generation/requeue-failed-dialogues.js';
import { listRunSummaries } from '../../src/generation/run.queries.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const NOW = new Date('2026-11-25T10:00:00Z');
const STATUSES = ['ok', 'ok', 'invalid', 'http_error', 'ok', 'timeout', 'network_error'] as const;

function addCalls(db: Db, runId: number, dialogueId: number, count: number, from = 0): void {
  for (let i = 0; i < count; i++) {
    const status = STATUSES[(from + i) % STATUSES.length] ?? 'ok';
    insertCall(
      db,
      {
        runId,
        dialogueId,
        turnIdx: from + i,
        speaker: 1,
        attempt: 1,
        requestHash: `h${from + i}`,
        request: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(3000) }] }),
        response: status === 'ok' ? { choices: [] } : null,
        status,
        error: status === 'ok' ? null : 'failed',
        httpStatus: status === 'http_error' ? 500 : null,
        promptTokens: 100 + i,
        completionTokens: status === 'ok' ? 7 * i : 0,
        latencyMs: 5,
      },
      NOW,
    );
  }
}

/** The counts as the rows say, computed here from dialogues and llm_calls. */
function countedFromRows(db: Db, runId: number) {
  return {
    dialogues: db.prepare('SELECT count(*) FROM dialogues WHERE run_id = ?').pluck().get(runId),
    complete: db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'complete'").pluck().get(runId),
    failed: db.prepare("SELECT count(*) FROM dialogues WHERE run_id = ? AND state = 'failed'").pluck().get(runId),
    calls: db.prepare('SELECT count(*) FROM llm_calls WHERE run_id = ?').pluck().get(runId),
    failed_calls: db.prepare("SELECT count(*) FROM llm_calls WHERE run_id = ? AND status <> 'ok'").pluck().get(runId),
    invalid: db.prepare("SELECT count(*) FROM llm_calls WHERE run_id = ? AND status = 'invalid'").pluck().get(runId),
    prompt_tokens: db.prepare('SELECT coalesce(sum(prompt_tokens), 0) FROM llm_calls WHERE run_id = ?').pluck().get(runId),
    completion_tokens: db.prepare('SELECT coalesce(sum(completion_tokens), 0) FROM llm_calls WHERE run_id = ?').pluck().get(runId),
  };
}

function shown(db: Db, runId: number) {
  const row = findRunWithCounts(db, runId);
  const totals = runCallTotals(db, runId);
  const summary = listRunSummaries(db).find((r) => r.id === runId);
  expect(listRunsWithCounts(db, 100, 0).find((r) => r.id === runId)).toEqual(row);
  expect(summary && { calls: summary.calls, dialogues: summary.dialogues, complete: summary.complete, failed: summary.failed }).toEqual(
    row && { calls: row.calls, dialogues: row.dialogues, complete: row.complete, failed: row.failed },
  );
  expect(totals.calls).toBe(row?.calls);
  expect(totals.ok + totals.invalid + totals.errors).toBe(totals.calls);
  return {
    dialogues: row?.dialogues,
    complete: row?.complete,
    failed: row?.failed,
    calls: row?.calls,
    failed_calls: row?.failed_calls,
    invalid: totals.invalid,
    prompt_tokens: row?.prompt_tokens,
    completion_tokens: row?.completion_tokens,
  };
}

describe('run totals', () => {
  it('follow dialogues and calls through inserts, state changes, retries of failed dialogues, deletions and a second run', () => {
    const { db } = createTestDb();
    const scenario = makeScenario(db);
    const runA = makeRun(db);
    const runB = makeRun(db);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    expect(shown(db, runA).dialogues).toBe(0);

    const d1 = makeDialogue(db, { runId: runA, scenario, mode: 'SCRIPT' });
    const d2 = makeDialogue(db, { runId: runA, scenario, mode: 'AGENTS', state: 'failed' });
    const d3 = makeDialogue(db, { runId: runA, scenario, mode: 'AGENTS', sampleIndex: 1 });
    const b1 = makeDialogue(db, { runId: runB, scenario, mode: 'SCRIPT' });
    addCalls(db, runA, d1, 9);
    addCalls(db, runA, d2, 5);
    addCalls(db, runB, b1, 4);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    expect(shown(db, runA)).toMatchObject({ dialogues: 3, complete: 2, failed: 1, calls: 14 });
    expect(shown(db, runB)).toEqual(countedFromRows(db, runB));

    // A dialogue being generated, then done; a failed one queued again (the console's button and the CLI's flag).
    db.prepare("UPDATE dialogues SET state = 'running' WHERE id = ?").run(d3);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    db.prepare("UPDATE dialogues SET state = 'complete' WHERE id = ?").run(d3);
    db.prepare("UPDATE runs SET kind = 'generation', state = 'paused' WHERE id = ?").run(runA);
    expect(requeueFailedDialogues(db, runA, 'test', NOW).length).toBe(1);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    expect(findRunWithCounts(db, runA)).toMatchObject({ failed: 0, running: 1 });

    // A call's outcome or tokens corrected; calls and dialogues removed (a dialogue's calls go with it).
    db.prepare("UPDATE llm_calls SET status = 'ok', completion_tokens = 50 WHERE dialogue_id = ? AND status <> 'ok'").run(d1);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    db.prepare('DELETE FROM llm_calls WHERE dialogue_id = ? AND turn_idx < 3').run(d1);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    db.prepare('DELETE FROM dialogues WHERE id = ?').run(d1);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    expect(shown(db, runB)).toEqual(countedFromRows(db, runB));

    // A whole run deleted: its totals go with it, the other run's stay as they were.
    db.prepare('DELETE FROM runs WHERE id = ?').run(runA);
    expect(db.prepare('SELECT count(*) FROM run_totals WHERE run_id = ?').pluck().get(runA)).toBe(0);
    expect(shown(db, runB)).toEqual(countedFromRows(db, runB));
  });

  it('migration 024 counts the dialogues and calls stored before it', () => {
    const db = openDatabase(join(tempDir(), 'old.db'));
    const all = listMigrations();
    migrate(
      db,
      all.filter((m) => m.version < 24),
    );
    const scenario = makeScenario(db);
    const runA = makeRun(db);
    const empty = makeRun(db);
    const d1 = makeDialogue(db, { runId: runA, scenario, mode: 'SCRIPT' });
    const d2 = makeDialogue(db, { runId: runA, scenario, mode: 'AGENTS', state: 'failed' });
    addCalls(db, runA, d1, 6);
    addCalls(db, runA, d2, 3, 6);
    migrate(db, all);
    expect(shown(db, runA)).toEqual(countedFromRows(db, runA));
    expect(shown(db, runA)).toMatchObject({ dialogues: 2, failed: 1, calls: 9 });
    expect(shown(db, empty)).toEqual(countedFromRows(db, empty));
    db.close();
  });
});
