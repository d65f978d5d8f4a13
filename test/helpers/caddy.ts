// Caddy (Debian's package) as the TLS-terminating reverse proxy of a deployment, for the HTTPS browser test: its own
// internal CA (`tls internal`) issues the certificates; its storage, and so its CA, live in a temporary directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';

export const CADDY_PATH = process.env.CADDY_PATH ?? 'caddy';

/** A TCP port free on this machine now (the kernel's choice), for a process that cannot be told to take port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export type Caddy = { httpsPort: number; rootCertPath: string; output: () => string; stop: () => Promise<void> };

/**
 * Starts Caddy with the site blocks given, in `dir`, on a free HTTPS port (and a free HTTP port, so it never takes
 * port 80), without its admin endpoint and without touching the machine's trust store; resolves once it accepts
 * connections and its root certificate is written.
 */
export async function startCaddy(dir: string, sites: string): Promise<Caddy> {
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const config = join(dir, 'Caddyfile');
  const storage = join(dir, 'caddy');
  writeFileSync(
    config,
    `{\n\tadmin off\n\tskip_install_trust\n\tauto_https disable_redirects\n\thttp_port ${httpPort}\n\thttps_port ${httpsPort}\n\tstorage file_system ${storage}\n}\n${sites}\n`,
  );
  const child: ChildProcess = spawn(CADDY_PATH, ['run', '--config', config, '--adapter', 'caddyfile'], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk) => (text += chunk));
  child.stderr?.on('data', (chunk) => (text += chunk));
  const rootCertPath = join(storage, 'pki/authorities/local/root.crt');
  let ended: string | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      ended ??= `Caddy exited with ${code}:\n${text}`;
      resolve();
    }),
  );
  child.once('error', (error) => {
    ended = `cannot start Caddy (${CADDY_PATH}): ${error.message}; install it: apt-get install caddy`;
  });
  for (let tries = 0; !(existsSync(rootCertPath) && (await accepts(httpsPort))); tries++) {
    if (ended !== null || tries === 200) {
      child.kill('SIGKILL');
      throw new Error(ended ?? `Caddy did not start within 20 s:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    httpsPort,
    rootCertPath,
    output: () => text,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
