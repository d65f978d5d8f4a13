// The pairs promised at consent (issue 10), read from the index pairs_open_by_load and stopped early (issue 12), must
// be exactly those a full sort of every open pair gives: pairs of samples the rater will meet in onboarding after all
// others, then least filled (accepted + live leases + reservations), then in serving order (the comparisons
// interleaved: migration 053), then by id; one per scenario sample unless the
// batch allows more; at most the per-rater cap. The reference below sorts in the test, independently of the query.
import { describe, expect, it } from 'vitest';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { readBatchSettings } from '../../src/batches/batch-settings.js';
import type { BatchSettings } from '../../src/batches/batch.schema.js';
import type { Db } from '../../src/db/connection.js';
import { planPromise } from '../../src/rating/rater-pool.js';
import { seededRandom } from '../../src/scenarios/seeded-random.js';
import { createTestDb } from '../helpers/test-db.js';
import { seedBatch } from './rating-fixtures.js';

const NOW = new Date('2026-03-01T10:00:00.000Z');

type Row = { id: number; load: number; accepted: number; serve: number; sample: string; met: number };

function referencePromise(db: Db, batchId: number, settings: BatchSettings): number[] {
  const rows = db
    .prepare<{ batchId: number }, Row>(
      `SELECT p.id, p.accepted + p.leased + p.reserved AS load, p.accepted, p.serve_order AS serve, p.scenario_id || '|' || p.cast_id || '|' || p.sample_index AS sample,
         EXISTS (SELECT 1 FROM pairs g WHERE g.batch_id = p.batch_id AND g.kind = 'onboarding' AND g.removed_at IS NULL
           AND g.scenario_id = p.scenario_id AND g.cast_id = p.cast_id AND g.sample_index = p.sample_index) AS met
       FROM pairs p WHERE p.batch_id = :batchId AND p.kind = 'regular' AND p.removed_at IS NULL`,
    )
    .all({ batchId });
  const open = rows.filter((r) => r.accepted < settings.judgmentsPerPair && r.load < settings.judgmentsPerPair);
  open.sort((x, y) => x.met - y.met || x.load - y.load || x.serve - y.serve || x.id - y.id);
  const chosen: number[] = [];
  const samples = new Set<string>();
  for (const r of open) {
    if (chosen.length >= settings.perRaterCap) break;
    if (!settings.allowSameSample && samples.has(r.sample)) continue;
    samples.add(r.sample);
    chosen.push(r.id);
  }
  return chosen;
}

describe('the pairs promised at consent', () => {
  it('planPromise, for random fills of a batch whose samples have several pairs and some are met in onboarding, promises exactly what a full sort of the open pairs gives', () => {
    const { db } = createTestDb();
    const k = 4;
    const seeded = seedBatch(db, { samples: 16, settings: { judgmentsPerPair: k, perRaterCap: 5, onboarding: { pairs: 3, threshold: 0.5 } } });
    const batch = getBatchRow(db, seeded.batchId);
    if (!batch) throw new Error('no batch');
    // 16 regular pairs over 8 samples: pair i takes the sample of pair i mod 8, so samples have two pairs each.
    const regular = db
      .prepare<{ b: number }, { id: number; scenario_id: string; cast_id: number; sample_index: number }>(
        "SELECT id, scenario_id, cast_id, sample_index FROM pairs WHERE batch_id = :b AND kind = 'regular' ORDER BY id",
      )
      .all({ b: seeded.batchId });
    expect(regular).toHaveLength(16);
    const setSample = db.prepare('UPDATE pairs SET scenario_id = :scenario_id, cast_id = :cast_id, sample_index = :sample_index WHERE id = :id');
    regular.forEach((pair, i) => {
      const source = regular[i % 8] as (typeof regular)[number];
      setSample.run({ id: pair.id, scenario_id: source.scenario_id, cast_id: source.cast_id, sample_index: source.sample_index });
    });
    // The onboarding pairs show samples of regular pairs 0, 1 and 2 (so 6 regular pairs are of samples met in onboarding).
    const onboarding = db.prepare<{ b: number }, number>("SELECT id FROM pairs WHERE batch_id = :b AND kind = 'onboarding' ORDER BY id").pluck().all({ b: seeded.batchId });
    onboarding.forEach((id, j) => {
      const source = regular[j] as (typeof regular)[number];
      setSample.run({ id, scenario_id: source.scenario_id, cast_id: source.cast_id, sample_index: source.sample_index });
    });
    const primedPairs = db
      .prepare(
        `SELECT count(*) FROM pairs p WHERE p.batch_id = ? AND p.kind = 'regular' AND EXISTS (SELECT 1 FROM pairs g WHERE g.batch_id = p.batch_id
           AND g.kind = 'onboarding' AND g.scenario_id = p.scenario_id AND g.cast_id = p.cast_id AND g.sample_index = p.sample_index)`,
      )
      .pluck()
      .get(seeded.batchId) as number;
    // Some pairs of samples met in onboarding, some not: the order between the two groups is tested.
    expect(primedPairs).toBeGreaterThan(0);
    expect(primedPairs).toBeLessThan(16);

    const random = seededRandom(11);
    const setLoad = db.prepare('UPDATE pairs SET accepted = :accepted, leased = :leased, reserved = :reserved WHERE id = :id');
    const base = readBatchSettings(batch);
    let primedFirstByLoad = 0;
    for (let round = 0; round < 40; round++) {
      for (const pair of regular) {
        setLoad.run({ id: pair.id, accepted: Math.floor(random() * k), leased: Math.floor(random() * 2), reserved: Math.floor(random() * 2) });
      }
      for (const perRaterCap of [1, 3, 8, 20]) {
        for (const allowSameSample of [false, true]) {
          const settings = { ...base, perRaterCap, allowSameSample };
          const expected = referencePromise(db, seeded.batchId, settings);
          expect(planPromise(db, batch, settings, NOW)).toEqual(expected);
        }
      }
      // Rounds in which a pair met in onboarding is the least filled open pair: where the order of the groups matters.
      const least = db
        .prepare(
          `SELECT EXISTS (SELECT 1 FROM pairs g WHERE g.batch_id = p.batch_id AND g.kind = 'onboarding' AND g.scenario_id = p.scenario_id
             AND g.cast_id = p.cast_id AND g.sample_index = p.sample_index) FROM pairs p
           WHERE p.batch_id = ? AND p.kind = 'regular' AND p.accepted + p.leased + p.reserved < ? ORDER BY p.accepted + p.leased + p.reserved, p.id LIMIT 1`,
        )
        .pluck()
        .get(seeded.batchId, k) as number | undefined;
      if (least === 1) primedFirstByLoad += 1;
    }
    expect(primedFirstByLoad).toBeGreaterThan(0);
  });
});
