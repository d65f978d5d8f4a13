#!/usr/bin/env node
// Thin launcher. In a checkout it registers tsx and runs the TypeScript CLI, so there is no build step to remember and
// never a stale build; where only the build ships (the container image: dist/, no src/) it runs the compiled CLI.
import { existsSync } from 'node:fs';

// `simarena runs list | head` closes the pipe early: that is the reader's choice, not an error worth a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

let cli;
if (existsSync(new URL('../src/cli/main.ts', import.meta.url))) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import('../src/cli/main.ts');
} else {
  cli = await import('../dist/cli/main.js');
}
process.exitCode = await cli.runCli(process.argv.slice(2), { isTty: process.stdout.isTTY === true });
