// Entry of the analysis worker process: lowers its priority, then registers tsx (as bin/simarena.js does) so it runs
// the TypeScript sources whatever loader the server used (tsx CLI, node --import tsx, vitest), then starts the worker.
import { execFileSync } from 'node:child_process';
import { setPriority } from 'node:os';

// The analysis process yields the CPU to the server (2 cores shared with the raters' requests): a long analysis slows
// itself rather than the raters. Nice 19 still takes a share of a busy core and is not preempted at once when a
// request wakes up (a million judgments' analysis raised raters' p99 by 100 ms that way); Linux's idle class runs it
// only on a core nobody else wants. util-linux's chrt sets it where there is one; otherwise nice 19 is what it gets.
// Both are set per thread on Linux: `--all-tasks` takes V8's garbage-collector and compiler threads along (started
// before this line; a million judgments keep them busy), and it runs before the TypeScript sources are compiled.
if (process.send) {
  try {
    setPriority(19);
  } catch {
    // Not allowed here: it runs at the server's priority.
  }
  if (process.platform === 'linux') {
    try {
      execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore', timeout: 2000 });
    } catch {
      // No chrt, or not allowed: nice 19 it is.
    }
  }
}

const { register } = await import('tsx/esm/api');
register();
await import('./analysis-worker.ts');
