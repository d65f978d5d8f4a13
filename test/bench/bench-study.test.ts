import { describe, expect, it } from 'vitest';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { buildStudy } from '../../scripts/bench/support/bench-study.js';
import { createTestDb } from '../helpers/test-db.js';

// The study that console-pages, page-parts, rater-load and stored-report build before they measure anything: when the
// launch checklist's rules tighten (Prolific's minimum pay per hour), the batch must still open, or every one of those
// benchmarks stops at its start, as they did once the checklist took up Prolific's minimum, with no test to notice.
describe('the benchmarks\' study', () => {
  it('opens under the launch checklist as it stands, with its pairs', async () => {
    const { db } = createTestDb();
    const study = await buildStudy(db, 20);
    expect(getBatchRow(db, study.batchId)?.state).toBe('open');
    expect(study.pairs).toBe(20);
  });
});
