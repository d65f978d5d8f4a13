import { runCli } from '../../src/cli/main.js';

/** Runs the real CLI in process against the given database; returns exit code and printed text. */
export async function cli(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { env: { LOG_LEVEL: 'silent', ...env }, out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
