import { describe, expect, it } from 'vitest';
import { LOBBY_SQL } from '../../src/live/live.queries.js';
import { createTestDb } from '../helpers/test-db.js';

// The live clock reads the lobby ten times a second for the life of the server, so that read must not grow with the
// players it has had: through the (batch_id, state) index it went over every one of them.
describe('lobby query', () => {
  it('reads only the waiting players, by the lobby index, already in its order', () => {
    const { db } = createTestDb();
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${LOBBY_SQL}`).all() as { detail: string }[]).map((r) => r.detail);
    expect(plan).toEqual(['SCAN p USING INDEX live_players_in_lobby', 'SEARCH r USING INTEGER PRIMARY KEY (rowid=?)']);
    const index = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'live_players_in_lobby'").get();
    expect(index?.sql).toMatch(/WHERE state = 'lobby'$/);
  });
});
