// Entry of the analysis worker process: lowers its priority, then registers tsx (as bin/simarena.js does) so it runs
// the TypeScript sources whatever loader the server used (tsx CLI, node --import tsx, vitest), then starts the worker.
// The priority is set before the TypeScript sources are compiled (lowest-priority.mjs says why and how).
import { lowerOwnPriority } from './lowest-priority.mjs';

if (process.send) lowerOwnPriority();

const { register } = await import('tsx/esm/api');
register();
await import('./analysis-worker.ts');
