#!/usr/bin/env node
// Thin launcher: registers tsx and runs the TypeScript CLI, so there is no build step to remember.
import { register } from 'tsx/esm/api';

// `simarena runs list | head` closes the pipe early: that is the reader's choice, not an error worth a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

register();
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2), { isTty: process.stdout.isTTY === true });
