// Issue 49 item 7: the README's `simarena plan` command runs as written, and its money reads "£1.88", never "1.88 £".
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/run-cli.js';

const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe("the README's plan command", () => {
  it('npx simarena plan --sequential, as the README writes it, runs and prints every amount with its currency sign in front', async () => {
    const commands = [...readme.matchAll(/`npx simarena (plan [^`]*)`/g)].map((m) => (m[1] as string).split(/\s+/));
    expect(commands.length).toBeGreaterThan(0);
    for (const args of commands) {
      expect(args).toContain('--sequential');
      const run = await cli(args);
      // Nothing on stderr but the simulation's progress lines (issue 51: the plan simulates batches as they run).
      expect(run.stderr.split('\n').filter((line) => line !== '' && !/^simulating .+: \d+ of \d+ studies$/.test(line))).toEqual([]);
      expect(run.code).toBe(0);
      // Under no preference a design this small pays for more than its maximum: a cost, with its sign in front too.
      expect(run.stdout).toMatch(/(saving about £\d+\.\d\d per comparison|costing about £\d+\.\d\d more per comparison than the fixed design)/);
      expect(run.stdout).not.toMatch(/£-/);
      // No amount followed by a symbol ("0.10 £"), anywhere in the plan.
      expect(run.stdout).not.toMatch(/\d \p{Sc}/u);
    }
  });
});
