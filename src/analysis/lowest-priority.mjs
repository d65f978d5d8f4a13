// Plain JavaScript: analysis-worker-boot.mjs runs it before tsx is registered.
import { execFileSync } from 'node:child_process';
import { setPriority } from 'node:os';

/**
 * Puts this process at the lowest priority the machine offers, so that it yields the CPU to the server (2 cores shared
 * with the raters' requests): a long analysis slows itself rather than the raters. Nice 19 still takes a share of a
 * busy core and is not preempted at once when a request wakes up (a million judgments' analysis raised raters' p99 by
 * 100 ms that way); Linux's idle class runs it only on a core nobody else wants. util-linux's chrt sets it where there
 * is one; otherwise nice 19 is what it gets. Both are set per thread on Linux: `--all-tasks` takes V8's
 * garbage-collector and compiler threads along (started before this call; a million judgments keep them busy).
 * The rater-load benchmark's busy loop takes the same, for the floor under the analysis's rise.
 */
export function lowerOwnPriority() {
  try {
    setPriority(19);
  } catch {
    // Not allowed here: it runs at its parent's priority.
  }
  if (process.platform === 'linux') {
    try {
      execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore', timeout: 2000 });
    } catch {
      // No chrt, or not allowed: nice 19 it is.
    }
  }
}
