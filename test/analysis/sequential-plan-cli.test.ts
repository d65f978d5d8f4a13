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
    power: z.number(),
    type_one_error: z.number(),
    cost_per_pair: z.number(),
    expected_saving_effect: z.number(),
  }),
});

describe('simarena plan --sequential', () => {
  it('simarena plan --effect 0.7 --sequential --pay £3.00 --json, with Pocock spending, plans fewer expected pairs than the maximum and the money they save', async () => {
    const run = await cli(['plan', '--effect', '0.7', '--k', '1', '--pay', '£3.00', '--per-rater', '10', '--sequential', '--looks', '4', '--spending', 'pocock', '--json']);
    expect(run.code).toBe(0);
    const plan = sequentialJson.parse(JSON.parse(run.stdout));
    expect(plan.sequential.max_pairs).toBe(plan.majority.pairs_needed);
    expect(plan.sequential.expected_pairs_effect).toBeLessThan(plan.sequential.max_pairs * 0.8);
    expect(plan.sequential.expected_pairs_null).toBeGreaterThan(plan.sequential.expected_pairs_effect);
    expect(plan.sequential.type_one_error).toBeLessThan(0.05 + 3 * Math.sqrt((0.05 * 0.95) / 4000));
    expect(plan.sequential.cost_per_pair).toBeCloseTo(plan.majority.cost.total / plan.majority.pairs_needed, 10);
    expect(plan.sequential.expected_saving_effect).toBeCloseTo(plan.sequential.cost_per_pair * (plan.sequential.max_pairs - plan.sequential.expected_pairs_effect), 8);
  });

  it('simarena plan --effect 0.7 --sequential --futility 0.2 --json, with futility, plans fewer expected pairs under no preference than without it', async () => {
    const args = ['plan', '--effect', '0.7', '--k', '1', '--per-rater', '10', '--sequential', '--looks', '4', '--spending', 'pocock', '--json'];
    const without = z.object({ sequential: z.object({ expected_pairs_null: z.number(), type_one_error: z.number() }) }).parse(JSON.parse((await cli(args)).stdout));
    const run = await cli([...args, '--futility', '0.2']);
    expect(run.code).toBe(0);
    const plan = z
      .object({ sequential: z.object({ expected_pairs_null: z.number(), expected_pairs_effect: z.number(), futility_stops_null: z.number(), futility_stops_effect: z.number(), power: z.number(), type_one_error: z.number(), futility: z.object({ beta: z.number(), binding: z.boolean(), effect: z.number() }) }) })
      .parse(JSON.parse(run.stdout)).sequential;
    expect(plan.futility).toMatchObject({ beta: 0.2, binding: false });
    expect(plan.futility_stops_null).toBeGreaterThan(0.3);
    expect(plan.expected_pairs_null).toBeLessThan(without.sequential.expected_pairs_null * 0.85);
    expect(plan.futility_stops_effect).toBeLessThan(0.25);
    // Non-binding: the efficacy bounds are those without futility, so futility can only lower the type I error.
    expect(plan.type_one_error).toBeLessThanOrEqual(without.sequential.type_one_error);
  });

  it('simarena plan --sequential --spending wrong, refuses it in one line', async () => {
    const run = await cli(['plan', '--effect', '0.7', '--sequential', '--spending', 'linear']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('--spending must be obrien-fleming or pocock, not "linear"');
  });
});
