#!/usr/bin/env node
// Thin launcher: registers tsx and runs the TypeScript CLI, so there is no build step to remember.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
process.exitCode = await runCli(process.argv.slice(2), { isTty: process.stdout.isTTY === true });
