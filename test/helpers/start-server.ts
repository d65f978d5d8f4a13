import { type ChildProcess, spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

/**
 * Starts the server from its sources (through tsx), or as given by `nodeArgs` (the compiled one), in a child process on
 * a free port and waits for its banner.
 */
export function startServer(
  env: Record<string, string>,
  nodeArgs = ['--import', 'tsx', 'src/server.ts'],
): Promise<{ child: ChildProcess; output: () => string; baseUrl: string }> {
  const child = spawn(process.execPath, nodeArgs, {
    cwd: root,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk) => (text += chunk));
  child.stderr?.on('data', (chunk) => (text += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${text}`));
    }, 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${text}`));
    });
    const poll = setInterval(() => {
      const match = /listening on (http:\/\/\S+)/.exec(text);
      if (match?.[1]) {
        clearInterval(poll);
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, output: () => text, baseUrl: match[1] });
      }
    }, 50);
  });
}

/** Stops a server started by startServer and waits for it to exit. */
export function stopServer(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}
