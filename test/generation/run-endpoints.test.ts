// The endpoints of a run's simulation card (listRunEndpoints): each base URL the calls went to, in the order first used,
// with its calls, valid calls and the dialogues it answered with a valid call. The run page rebuilds the card on each
// view, and the list was counted from every call of the run (132–145 ms at 900,000 calls: scripts/bench/run-card.ts);
// migration 083 keeps the counts with the calls. Each case checks them against that count from the rows.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/db/connection.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { type CallStatus, insertCall, listRunEndpoints } from '../../src/generation/call.queries.js';
import { makeDialogue, makeRun, makeScenario } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

/** What the card counted before migration 083. */
function countedFromRows(db: Db, runId: number) {
  return db
    .prepare(
      `SELECT base_url, count(*) AS calls, coalesce(sum(status = 'ok'), 0) AS ok, count(DISTINCT CASE WHEN status = 'ok' THEN dialogue_id END) AS dialogues
       FROM llm_calls WHERE run_id = :runId GROUP BY base_url ORDER BY min(id)`,
    )
    .all({ runId });
}

const PRIMARY = 'http://127.0.0.1:8001/v1';
const FALLBACK = 'http://127.0.0.1:8002/v1';

/** Two runs; the first's calls go to two endpoints and, for the oldest ones, to none recorded (NULL). */
function runsWithCalls(db: Db) {
  const scenario = makeScenario(db);
  const runs = [makeRun(db, { modes: ['AGENTS'] }), makeRun(db, { modes: ['AGENTS'] })];
  const dialogues = runs.map((runId) => [0, 1, 2].map((sampleIndex) => makeDialogue(db, { runId, scenario, mode: 'AGENTS', sampleIndex })));
  const now = new Date('2026-12-04T10:00:00.000Z');
  const turns = new Map<number, number>();
  const call = (r: number, d: number, baseUrl: string | null, status: CallStatus) => {
    const dialogueId = dialogues[r]?.[d] as number;
    const turnIdx = turns.get(dialogueId) ?? 0;
    turns.set(dialogueId, turnIdx + 1);
    return insertCall(
      db,
      {
        runId: runs[r] as number, dialogueId, turnIdx, speaker: 1, attempt: 1, requestHash: `h${dialogueId}-${turnIdx}`, request: '{}', response: { content: 'x' }, status,
        error: null, httpStatus: 200, promptTokens: 10, completionTokens: 5, latencyMs: 100, providerBatchId: null, baseUrl,
      },
      now,
    );
  };
  call(0, 0, null, 'ok');
  call(0, 1, null, 'invalid');
  call(0, 0, PRIMARY, 'ok');
  call(0, 0, PRIMARY, 'ok');
  call(0, 1, PRIMARY, 'timeout');
  call(0, 2, FALLBACK, 'ok');
  call(0, 1, FALLBACK, 'ok');
  call(0, 1, PRIMARY, 'invalid');
  call(1, 0, PRIMARY, 'ok');
  return { runs, dialogues, call };
}

describe('the endpoints of a run\'s calls', () => {
  it('are counted with the calls: in the order first used, the address kept or not, valid calls and dialogues answered, equal to the count from the rows; another run\'s calls apart', () => {
    const { db } = createTestDb();
    const { runs } = runsWithCalls(db);
    const [first, second] = runs as [number, number];
    expect(listRunEndpoints(db, first)).toEqual([
      { base_url: null, calls: 2, ok: 1, dialogues: 1 },
      { base_url: PRIMARY, calls: 4, ok: 2, dialogues: 1 },
      { base_url: FALLBACK, calls: 2, ok: 2, dialogues: 2 },
    ]);
    expect(listRunEndpoints(db, first)).toEqual(countedFromRows(db, first));
    expect(listRunEndpoints(db, second)).toEqual([{ base_url: PRIMARY, calls: 1, ok: 1, dialogues: 1 }]);
  });

  it('follow a call changed or removed, and a dialogue deleted with its calls, equal to the count from the rows each time', () => {
    const { db } = createTestDb();
    const { runs, dialogues } = runsWithCalls(db);
    const first = runs[0] as number;
    // The fallback's first call becomes invalid: it answered one dialogue fewer.
    db.prepare("UPDATE llm_calls SET status = 'invalid' WHERE run_id = ? AND base_url = ? AND dialogue_id = ?").run(first, FALLBACK, dialogues[0]?.[2]);
    expect(listRunEndpoints(db, first)).toEqual(countedFromRows(db, first));
    expect(listRunEndpoints(db, first)[2]).toEqual({ base_url: FALLBACK, calls: 2, ok: 1, dialogues: 1 });
    // The first call of all (no address) is removed: the primary endpoint is now the first one used.
    db.prepare('DELETE FROM llm_calls WHERE id = (SELECT min(id) FROM llm_calls WHERE run_id = ?)').run(first);
    expect(listRunEndpoints(db, first)).toEqual(countedFromRows(db, first));
    db.prepare('DELETE FROM llm_calls WHERE run_id = ? AND base_url IS NULL').run(first);
    expect(listRunEndpoints(db, first).map((e) => e.base_url)).toEqual([PRIMARY, FALLBACK]);
    // A call moved to another endpoint, then a dialogue deleted (its calls go with it).
    db.prepare('UPDATE llm_calls SET base_url = ? WHERE id = (SELECT min(id) FROM llm_calls WHERE run_id = ? AND base_url = ?)').run(FALLBACK, first, PRIMARY);
    expect(listRunEndpoints(db, first)).toEqual(countedFromRows(db, first));
    db.prepare('DELETE FROM dialogues WHERE id = ?').run(dialogues[0]?.[1]);
    expect(listRunEndpoints(db, first)).toEqual(countedFromRows(db, first));
    expect(listRunEndpoints(db, first).reduce((n, e) => n + e.calls, 0)).toBe(db.prepare('SELECT count(*) FROM llm_calls WHERE run_id = ?').pluck().get(first));
  });

  it('migration 083, on a database migrated to 082 that holds calls, sets the counts to those of the rows', () => {
    const db = openDatabase(join(tempDir(), 'before-083.db'));
    migrate(db, listMigrations().filter((m) => m.version <= 82));
    const { runs } = runsWithCalls(db);
    const expected = countedFromRows(db, runs[0] as number);
    migrate(db);
    expect(listRunEndpoints(db, runs[0] as number)).toEqual(expected);
    expect(listRunEndpoints(db, runs[1] as number)).toEqual(countedFromRows(db, runs[1] as number));
  });
});
