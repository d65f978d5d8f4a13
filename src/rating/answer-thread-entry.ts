import { fileURLToPath } from 'node:url';

let made: Promise<URL | null> | undefined;

/**
 * The answer thread's code (answer-thread-worker.ts and what it imports) as one ES module, made by esbuild from the
 * TypeScript sources once per process, as a data: URL; rejects when it cannot be made (the thread then registers tsx
 * itself: answer-thread-boot.mjs), and gives null when not `bundled`. Registering tsx in the thread held 44 MB of
 * memory (tsx gives each thread a loader thread of its own, and keeps source maps), the bundle 16 MB; making it takes
 * about 25 ms. Packages (better-sqlite3, a native addon; zod, which bundled in held 12 MB more) are imported from where
 * this process finds them, by file URL. In the production build (dist/, scripts/deploy/build.mjs) this module is
 * compiled JavaScript and so is the thread's: that file is the entry, with nothing to bundle or register.
 */
export function answerThreadEntry(bundled = true): Promise<URL | null> {
  if (import.meta.url.endsWith('.js')) return Promise.resolve(new URL('./answer-thread-worker.js', import.meta.url));
  if (!bundled) return Promise.resolve(null);
  made ??= makeEntry();
  return made;
}

async function makeEntry(): Promise<URL> {
  // Imported here, not above: the compiled server never loads esbuild.
  const { build, stop } = await import('esbuild');
  try {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('./answer-thread-worker.ts', import.meta.url))],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      logLevel: 'silent',
      plugins: [{ name: 'packages-where-they-are', setup: (bundle) => bundle.onResolve({ filter: /^[^./]/ }, ({ path }) => ({ path: packageUrl(path), external: true })) }],
    });
    const code = result.outputFiles[0]?.text;
    if (!code) throw new Error('esbuild made no output');
    return new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`);
  } finally {
    // esbuild's service process is not needed again.
    await stop();
  }
}

/** A package's entry as this module would import it; Node's own modules as they are. */
function packageUrl(specifier: string): string {
  return specifier.startsWith('node:') ? specifier : import.meta.resolve(specifier);
}
