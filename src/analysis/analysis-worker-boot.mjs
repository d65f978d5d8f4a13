// Entry of the analysis worker process: lowers its priority, then starts the worker. In the production build (dist/,
// scripts/deploy/build.mjs) the worker is compiled JavaScript beside this file; from the TypeScript sources it
// registers tsx first (as bin/simarena.js does), whatever loader the server used (tsx CLI, node --import tsx, vitest).
// The priority is set before the TypeScript sources are compiled (lowest-priority.mjs says why and how).
import { existsSync } from 'node:fs';
import { lowerOwnPriority } from './lowest-priority.mjs';

if (process.send) lowerOwnPriority();

const compiled = new URL('./analysis-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./analysis-worker.ts');
}
