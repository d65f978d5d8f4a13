// `simarena plan` through the real CLI: figures without a pilot, the design effect from a pilot batch in a real SQLite
// database (its Fleiss' kappa recomputed here by hand), and one-line errors for bad flags.
import { describe, expect, it } from 'vitest';
import { signTestSampleSize } from '../../src/analysis/sign-test-power.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb } from '../helpers/test-db.js';

/** Fleiss' kappa for a table of per-pair (a, b) counts with the same number of ratings per pair (Fleiss 1971). */
function fleiss(rows: [number, number][]): number {
  const n = rows[0]![0] + rows[0]![1];
  const pBar = rows.reduce((s, [a, b]) => s + (a * a + b * b - n) / (n * (n - 1)), 0) / rows.length;
  const pa = rows.reduce((s, [a]) => s + a, 0) / (rows.length * n);
  const pe = pa * pa + (1 - pa) * (1 - pa);
  return (pBar - pe) / (1 - pe);
}

describe('simarena plan', () => {
  it('simarena plan --effect 0.65 --k 3 --pay £3.00 --minutes 12, without a pilot, prints pairs, raters, cost and pay per hour', async () => {
    const run = await cli(['plan', '--effect', '0.65', '--alpha', '0.05', '--power', '0.8', '--k', '3', '--pay', '£3.00', '--minutes', '12', '--per-rater', '10']);
    expect(run.code).toBe(0);
    const n = signTestSampleSize(0.65, 0.05, 0.8)!.n;
    expect(run.stdout).toContain(`On judgments: ${Math.ceil(n / 3)} pairs, ${Math.ceil(n / 3) * 3} judgments`);
    expect(run.stdout).toContain(`${Math.ceil((Math.ceil(n / 3) * 3) / 10)} raters, cost £${(Math.ceil((Math.ceil(n / 3) * 3) / 10) * 3).toFixed(2)}`);
    expect(run.stdout).toContain('Pay: £3.00 per rater for 12 minutes = £15.00 per hour.');
    expect(run.stdout).toMatch(/On pair majorities: \d+ pairs/);
    expect(run.stdout).toContain('Convention: exact two-sided sign test');
  });

  it('simarena plan --from-batch ID --json, for a pilot with agreeing raters, takes rho from its Fleiss kappa and the pay from its settings', async () => {
    const { db, path } = createTestDb();
    const votes: ('a' | 'b')[][] = [
      ['a', 'a', 'a'],
      ['a', 'a', 'b'],
      ['b', 'b', 'b'],
      ['a', 'a', 'a'],
      ['b', 'b', 'a'],
      ['a', 'a', 'a'],
      ['a', 'b', 'a'],
      ['b', 'b', 'b'],
    ];
    const made = makeBatchWithJudgments(db, { votes, settings: { pay: '£2.50', estimatedMinutes: 10, perRaterCap: 8, judgmentsPerPair: 3 } });
    db.close();
    const kappa = fleiss(votes.map((v) => [v.filter((x) => x === 'a').length, v.filter((x) => x === 'b').length]));
    const run = await cli(['plan', '--effect', '0.65', '--from-batch', String(made.batchId), '--json'], { DATABASE_PATH: path });
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout);
    expect(plan.design.rho).toBeCloseTo(kappa, 12);
    expect(plan.design.design_effect).toBeCloseTo(1 + 2 * kappa, 12);
    expect(plan.design.pilot).toMatchObject({ pairs: 8, judgments: 24, tie_share: 0 });
    expect(plan.k).toBe(3);
    expect(plan.per_rater).toBe(8);
    expect(plan.pay).toEqual({ per_rater: 2.5, currency: '£', minutes: 10, per_hour: 15 });
    const n = signTestSampleSize(0.65, 0.05, 0.8)!.n;
    expect(plan.judgments.decisive_needed).toBe(Math.ceil(n * (1 + 2 * kappa)));
  });

  it('simarena plan, for an effect of 0.5, an unknown pilot or a pay without an amount, fails with one line', async () => {
    const half = await cli(['plan', '--effect', '0.5']);
    expect(half.code).toBe(1);
    expect(half.stderr).toBe('error: --effect must be a share between 0 and 1 other than 0.5, e.g. 0.65');
    const { db, path } = createTestDb();
    db.close();
    const missing = await cli(['plan', '--effect', '0.6', '--from-batch', '999'], { DATABASE_PATH: path });
    expect(missing.stderr).toBe('error: No batch has the id or name "999" (see "simarena batches list").');
    const pay = await cli(['plan', '--effect', '0.6', '--pay', 'lots']);
    expect(pay.stderr).toBe('error: --pay must be an amount such as £3.00 or 3.00 GBP, not "lots"');
  });
});
