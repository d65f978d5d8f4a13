// `simarena plan --realism` through the real CLI (issue 53): the pairs and raters of a which-is-real question's
// equivalence test, the design effect from a pilot realism batch in a real SQLite file, and one-line errors.
import { describe, expect, it } from 'vitest';
import { answersAgainst } from '../../src/analysis/answers-against.js';
import { equivalenceSampleSize, oneWayIcc } from '../../src/analysis/realism-plan.js';
import { seedFixtureBatch } from './realism-batch.js';
import { fixtureTable, REALISM_FIXTURE as f } from './realism-fixture.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb } from '../helpers/test-db.js';

describe('simarena plan --realism', () => {
  it('plan --realism --margin 0.05 --k 3 --per-rater 10 --conditions 3 --pay £3.00, without a pilot, prints pairs per condition, the batch, its raters and cost, and warns that independence is optimistic', async () => {
    const run = await cli(['plan', '--realism', '--margin', '0.05', '--k', '3', '--per-rater', '10', '--conditions', '3', '--pay', '£3.00']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const n = equivalenceSampleSize(0.5, 0.05, 0.05, 0.8)!.n;
    const pairs = Math.ceil(n / 3);
    const raters = Math.ceil((pairs * 3 * 3) / 10);
    expect(run.stdout).toContain(`Per condition: ${pairs} pairs, ${pairs * 3} answers (${n} if independent)`);
    expect(run.stdout).toContain(`Batch: ${pairs * 3} pairs, ${pairs * 9} judgments, ${raters} raters, cost £${(raters * 3).toFixed(2)}.`);
    expect(run.stdout).toContain('Note: no pilot and no intraclass correlations: answers are taken as independent');
  });

  it('plan --realism --from-batch ID --json takes the intraclass correlations by pair and by rater from the pilot\'s which-is-real answers, and K and the pairs per rater from its settings', async () => {
    const { db, path } = createTestDb();
    const { batchId } = seedFixtureBatch(db, f);
    db.close();
    const run = await cli(['plan', '--realism', '--margin', '0.1', '--from-batch', String(batchId), '--json'], { DATABASE_PATH: path });
    expect(run.stderr).toBe('');
    const plan = JSON.parse(run.stdout);
    // The same correlations computed here from the fixture's rows, each answer less its condition's share right.
    const a = answersAgainst(fixtureTable(f, (r, realSide) => (r.correct === 1 ? realSide : ((1 - realSide) as 0 | 1))), f.design.real);
    const share = a.conditions.map((_, c) => {
      const rows = [...a.condition.keys()].filter((i) => a.condition[i] === c);
      return rows.reduce((s, i) => s + 1 - (a.chosen[i] as number), 0) / rows.length;
    });
    const centred = Float64Array.from(a.chosen, (x, i) => 1 - x - (share[a.condition[i] as number] as number));
    expect(plan.design.pilot).toMatchObject({ answers: f.rows.length, batch: { id: batchId } });
    expect(plan.design.icc_pair).toBeCloseTo(Math.max(0, oneWayIcc(centred, a.item) ?? 0), 12);
    expect(plan.design.icc_rater).toBeCloseTo(Math.max(0, oneWayIcc(centred, a.rater) ?? 0), 12);
    expect(plan.k).toBe(6);
    expect(plan.per_rater).toBe(100);
    expect(plan.per_condition.pairs_needed).toBeGreaterThan(0);
  });

  it('plan --realism, without --margin, with a margin of 0.3, or from a batch with no which-is-real question, fails with one line; an accuracy outside the margin prints why nothing can be planned', async () => {
    expect(await cli(['plan', '--realism'])).toMatchObject({ code: 1, stderr: 'error: --realism needs --margin, the equivalence margin around 0.5 detection accuracy (e.g. 0.05)' });
    expect(await cli(['plan', '--realism', '--margin', '0.3'])).toMatchObject({ code: 1, stderr: 'error: --margin must be a number of at least 0.001 and at most 0.25, not "0.3"' });
    expect(await cli(['plan', '--realism', '--margin', '0.05', '--effect', '0.6'])).toMatchObject({ code: 1 });
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [['a', 'b']] });
    db.close();
    const pilot = await cli(['plan', '--realism', '--margin', '0.05', '--from-batch', String(made.batchId)], { DATABASE_PATH: path });
    expect(pilot.code).toBe(1);
    expect(pilot.stderr).toMatch(/^error: --from-batch: batch \d+ \(.*\) has no which-is-real question$/);
    const outside = await cli(['plan', '--realism', '--margin', '0.05', '--accuracy', '0.6']);
    expect(outside.code).toBe(0);
    expect(outside.stdout).toContain('Note: an accuracy of 0.6 lies outside 0.5 ± 0.05: equivalence cannot be shown, whatever the sample.');
    expect(outside.stdout).not.toContain('Per condition');
    // plan without --realism still needs --effect.
    expect(await cli(['plan'])).toMatchObject({ code: 1, stderr: 'error: --effect is required (the preference to detect, e.g. 0.65), or give --realism --margin M' });
  });
});
