// `simarena plan --sequential` through the real CLI: the sequential design over the fixed design's pairs, its expected
// pairs under the null and the stated effect, and the money saved (simulated with the rule's own code, seeded).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cli } from '../helpers/run-cli.js';

const sequentialJson = z.object({
  majority: z.object({ pairs_needed: z.number(), cost: z.object({ total: z.number() }) }),
  sequential: z.object({
    max_pairs: z.number(),
    expected_pairs_null: z.number(),
    expected_pairs_effect: z.number(),
    pairs_at_stop_effect: z.number(),
    power: z.number(),
    power_se: z.number(),
    type_one_error: z.number(),
    type_one_error_se: z.number(),
    studies: z.number(),
    rater_lean: z.number(),
    per_rater: z.number(),
    judgments_per_pair: z.number(),
    cost_per_pair: z.number(),
    expected_saving_effect: z.number(),
  }),
});

describe('simarena plan --sequential', () => {
  it('simarena plan --effect 0.6 --sequential --pay £3.00 --json, with Pocock spending, plans fewer pairs paid for than the maximum, no fewer than the stopping look used, and the money they save', async () => {
    const run = await cli(['plan', '--effect', '0.6', '--k', '1', '--pay', '£3.00', '--per-rater', '10', '--sequential', '--looks', '4', '--spending', 'pocock', '--studies', '200', '--json']);
    expect(run.code).toBe(0);
    const plan = sequentialJson.parse(JSON.parse(run.stdout));
    expect(plan.sequential.max_pairs).toBe(plan.majority.pairs_needed);
    // Raters who lean (SD 0.5, 10 pairs each) give the clustered statistic less power than the pair count says, and the
    // first look waits for its tenth rater (about 100 pairs, not the planned 50: src/batches/sequential-look.ts), so
    // fewer studies stop early than pair-count theory expects (172 of 199 pairs at the stop on average with this seed).
    expect(plan.sequential.pairs_at_stop_effect).toBeLessThan(plan.sequential.max_pairs * 0.9);
    // Every pair the stopping look used is paid for, and so are the raters' promises beyond it (a sequential batch hands
    // out no more of a comparison's pairs than its next look needs: src/rating/look-room.ts).
    expect(plan.sequential.expected_pairs_effect).toBeGreaterThanOrEqual(plan.sequential.pairs_at_stop_effect);
    expect(plan.sequential.expected_pairs_effect).toBeLessThan(plan.sequential.max_pairs);
    expect(plan.sequential.expected_pairs_null).toBeGreaterThan(plan.sequential.expected_pairs_effect);
    // Simulated as it runs: raters leaning with SD 0.5 (the default), 10 pairs a rater; the MC standard errors are reported.
    expect(plan.sequential).toMatchObject({ rater_lean: 0.5, per_rater: 10, judgments_per_pair: 1, studies: 200 });
    expect(plan.sequential.type_one_error).toBeLessThan(0.05 + 3 * Math.sqrt((0.05 * 0.95) / 200));
    expect(plan.sequential.type_one_error_se).toBeCloseTo(Math.sqrt((plan.sequential.type_one_error * (1 - plan.sequential.type_one_error)) / 200), 12);
    expect(plan.sequential.power_se).toBeCloseTo(Math.sqrt((plan.sequential.power * (1 - plan.sequential.power)) / 200), 12);
    expect(plan.sequential.cost_per_pair).toBeCloseTo(plan.majority.cost.total / plan.majority.pairs_needed, 10);
    expect(plan.sequential.expected_saving_effect).toBeCloseTo(plan.sequential.cost_per_pair * (plan.sequential.max_pairs - plan.sequential.expected_pairs_effect), 8);
  });

  it('simarena plan --effect 0.6 --sequential --futility 0.2 --json, with futility, plans fewer pairs paid for under no preference than without it', async () => {
    const args = ['plan', '--effect', '0.6', '--k', '1', '--per-rater', '5', '--sequential', '--looks', '4', '--spending', 'pocock', '--studies', '200', '--json'];
    const without = z.object({ sequential: z.object({ expected_pairs_null: z.number(), type_one_error: z.number() }) }).parse(JSON.parse((await cli(args)).stdout));
    const run = await cli([...args, '--futility', '0.2']);
    expect(run.code).toBe(0);
    const plan = z
      .object({ sequential: z.object({ expected_pairs_null: z.number(), expected_pairs_effect: z.number(), futility_stops_null: z.number(), futility_stops_effect: z.number(), power: z.number(), type_one_error: z.number(), futility: z.object({ beta: z.number(), binding: z.boolean(), effect: z.number() }) }) })
      .parse(JSON.parse(run.stdout)).sequential;
    expect(plan.futility).toMatchObject({ beta: 0.2, binding: false });
    expect(plan.futility_stops_null).toBeGreaterThan(0.3);
    expect(plan.expected_pairs_null).toBeLessThan(without.sequential.expected_pairs_null * 0.85);
    expect(plan.futility_stops_effect).toBeLessThan(0.35);
    // Non-binding: the efficacy bounds are those without futility; the type I error is held.
    expect(plan.type_one_error).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / 200));
  });

  it('simarena plan --effect 0.65 --k 3 --sequential --rater-lean 0 --json, with raters who do not lean, plans more power than with leaning raters', async () => {
    const args = ['plan', '--effect', '0.65', '--k', '3', '--per-rater', '20', '--sequential', '--looks', '3', '--studies', '200', '--json'];
    const power = async (extra: string[]) => z.object({ sequential: z.object({ power: z.number(), rater_lean: z.number() }) }).parse(JSON.parse((await cli([...args, ...extra])).stdout)).sequential;
    const flat = await power(['--rater-lean', '0']);
    const leaning = await power(['--rater-lean', '1']);
    expect([flat.rater_lean, leaning.rater_lean]).toEqual([0, 1]);
    expect(leaning.power).toBeLessThan(flat.power);
  });

  it('simarena plan --sequential, for an O\'Brien–Fleming design of 10 to 19 raters, says that batches open refuses it and what to plan instead; not for Pocock or 20 raters', async () => {
    // 42 pairs × 3 judgments: 14 raters at 9 pairs a rater.
    const args = ['plan', '--effect', '0.65', '--k', '3', '--sequential', '--looks', '3', '--studies', '100'];
    const text = await cli([...args, '--per-rater', '9']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      "  not offered: With 14 raters, fewer than 20, O'Brien–Fleming's false-positive rate was measured above alpha (0.056 for 0.05 with 15 raters at 40 pairs a rater), where Pocock's held, so such a batch does not open; plan it with --per-rater 6 or less (20 raters), or --spending pocock",
    );
    const refused = async (extra: string[]) => z.object({ sequential: z.object({ max_pairs: z.number(), refused: z.string().nullable() }) }).parse(JSON.parse((await cli([...args, ...extra, '--json'])).stdout)).sequential;
    expect((await refused(['--per-rater', '9'])).refused).toContain('With 14 raters');
    expect(await refused(['--per-rater', '6'])).toEqual({ max_pairs: 42, refused: null });
    expect((await refused(['--per-rater', '9', '--spending', 'pocock'])).refused).toBeNull();
  });

  it('simarena plan --sequential, for a design of fewer than 10 raters, says beside its type I error that its looks hold only for these raters', async () => {
    const args = ['plan', '--effect', '0.65', '--k', '3', '--sequential', '--looks', '3', '--studies', '100'];
    const few = await cli([...args, '--per-rater', '20']);
    expect(few.stdout).toContain('  conditional on these raters: with 7 raters, fewer than 10, each look tests pair majorities, which says what these raters prefer;');
    expect(few.stdout).not.toContain('not offered');
    const design = async (perRater: string) => z.object({ sequential: z.object({ raters: z.number(), conditional_on_raters: z.boolean() }) }).parse(JSON.parse((await cli([...args, '--per-rater', perRater, '--json'])).stdout)).sequential;
    expect(await design('20')).toEqual({ raters: 7, conditional_on_raters: true });
    expect(await design('6')).toEqual({ raters: 21, conditional_on_raters: false });
    expect((await cli([...args, '--per-rater', '6'])).stdout).not.toContain('conditional on these raters');
  });

  it('simarena plan --sequential --rater-lean -1, refuses it in one line', async () => {
    const run = await cli(['plan', '--effect', '0.7', '--sequential', '--rater-lean', '-1']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--rater-lean');
  });

  it('simarena plan --sequential --spending wrong, refuses it in one line', async () => {
    const run = await cli(['plan', '--effect', '0.7', '--sequential', '--spending', 'linear']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--spending must be obrien-fleming or pocock, not "linear"');
  });
});
