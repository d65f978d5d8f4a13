// Entry of the answer thread: registers tsx (as analysis-worker-boot.mjs does) so the thread runs the TypeScript
// sources whatever loader the server used (node --import tsx, the tsx CLI, vitest), then starts it.
const { register } = await import('tsx/esm/api');
register();
await import('./answer-thread-worker.ts');
