#!/usr/bin/env node
// The production build: every TypeScript file of src/ compiled by esbuild, one file each, to dist/ with its source map;
// the files beside them (SQL migrations, prompt texts, the plain-JavaScript thread and worker entries) copied as they
// are. dist/ mirrors src/ at the same depth in the repository, so the paths the code finds from its own location
// (`new URL('../views/', import.meta.url)`, package.json, data/) hold in both.
//   node scripts/deploy/build.mjs              build now
//   node scripts/deploy/build.mjs --if-stale   build only when dist/ is missing or older than a file of src/ (npm start)
// Plain JavaScript, so that it runs with nothing compiled and no TypeScript loader.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');
// Written last, so that a build cut short is never taken for a finished one.
const stamp = join(dist, '.built');

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Why a build is needed, or null when dist/ is newer than every file of src/ (and this script, and package.json). */
function staleness() {
  if (!existsSync(stamp)) return 'no build yet';
  const built = statSync(stamp).mtimeMs;
  const inputs = [...filesUnder(src), fileURLToPath(import.meta.url), join(root, 'package.json')];
  const newer = inputs.find((file) => statSync(file).mtimeMs > built);
  return newer ? `${relative(root, newer)} changed since the last build` : null;
}

async function build() {
  const { build: esbuild } = await import('esbuild');
  const files = filesUnder(src);
  const typescript = files.filter((file) => file.endsWith('.ts'));
  const others = files.filter((file) => !file.endsWith('.ts') && !file.endsWith('.d.mts'));
  rmSync(dist, { recursive: true, force: true });
  await esbuild({
    entryPoints: typescript,
    outbase: src,
    outdir: dist,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // The stack traces in the logs name src/ files and lines; the sources themselves stay in src/.
    sourcesContent: false,
    logLevel: 'warning',
  });
  for (const file of others) {
    const to = join(dist, relative(src, file));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(file, to);
  }
  // Node reads dist/*.js as ES modules through the repository's package.json ("type": "module").
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return typescript.length;
}

const ifStale = process.argv.includes('--if-stale');
const reason = staleness();
if (ifStale && reason === null) process.exit(0);
const started = performance.now();
const count = await build();
const why = reason ?? 'asked for';
process.stderr.write(`simarena: compiled ${count} files of src/ to dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s (${why})\n`);
