import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests that wait on the analysis worker wait on a process in Linux's idle scheduling class (it yields to everything
    // else on purpose): with the suite's own two workers and a browser busy on a 2-core machine, one took 30 s.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Browser tests share one Chromium per file; two cores on CI, so keep parallelism modest.
    maxWorkers: 2,
  },
});
