import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signIn } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

/** util-linux's chrt, which the worker uses to enter Linux's idle scheduling class (Debian always has it). */
const hasChrt = (() => {
  try {
    execFileSync('chrt', ['--help'], { stdio: 'ignore' });
    return process.platform === 'linux';
  } catch {
    return false;
  }
})();

/** The pids of this process's children whose command line names `part`. */
function childrenRunning(part: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);
        return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(part);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** Each thread's scheduling policy (field 41 of /proc/<pid>/task/<tid>/stat; 5 is SCHED_IDLE). */
function threadPolicies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[38]));
}

describe('the analysis worker process', () => {
  it.skipIf(!hasChrt)("runs every one of its threads (V8 garbage-collector and compiler threads too) in Linux's idle scheduling class, so raters' requests come first", async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'a', 'b']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);

    const [worker] = childrenRunning('analysis-worker-boot.mjs');
    expect(worker).toBeDefined();
    const policies = threadPolicies(worker as number);
    expect(policies.length).toBeGreaterThan(1);
    expect(policies.every((policy) => policy === 5)).toBe(true);
  });
});
