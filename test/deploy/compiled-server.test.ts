// The production build as npm start runs it (docs/operator/deploying.md, "The compiled server"): dist/ built by
// scripts/deploy/build.mjs, the server started with npm start's own node command, no TypeScript loader anywhere. A rater
// walks the demo batch (the answer thread stores the answers), and an analysis through the API runs in the worker
// process the server forks, from its compiled file.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedAnalysisReportSchema } from '../../src/analysis/analysis-report.schema.js';
import { openDatabase } from '../../src/db/connection.js';
import { startServer, stopServer } from '../helpers/start-server.js';
import { tempDir } from '../helpers/test-db.js';

const root = new URL('../../', import.meta.url).pathname;

/** The node arguments of npm start's server command (after its `exec node`), e.g. `--enable-source-maps ... dist/server.js`. */
function startScriptArgs(): string[] {
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const command = /&& exec node (.+)$/.exec(scripts.start ?? '')?.[1];
  if (!command) throw new Error(`npm start does not end in "exec node ...": ${scripts.start}`);
  return command.split(/\s+/);
}

const children = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
const commandLine = (pid: number | string) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

describe('the compiled server (npm run build, npm start)', () => {
  it('serves the rater flow and the analysis from dist/ with no TypeScript loader in the server, its threads or its worker', async () => {
    execFileSync(process.execPath, ['scripts/deploy/build.mjs', '--if-stale'], { cwd: root });
    const args = startScriptArgs();
    expect(args.at(-1)).toBe('dist/server.js');
    const dbPath = join(tempDir(), 'simarena.db');
    const env = { DATABASE_PATH: dbPath, LOG_LEVEL: 'info', SESSION_SECRET: 'compiled-server-test-secret-0123456789' };
    const { child, output, baseUrl } = await startServer(env, args);
    try {
      expect(commandLine(child.pid ?? 0)).not.toMatch(/tsx/);
      const link = /Rater link of demo batch "[^"]+": (http\S+)/.exec(output())?.[1] ?? '';
      const walked = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/deploy/rater-walk.ts', link], { cwd: root, encoding: 'utf8' });
      expect(walked).toMatch(/^completion code DEMO-DONE after [1-9]\d* answers/);

      const created = execFileSync(process.execPath, ['bin/simarena.js', 'tokens', 'create', '--email', 'admin@localhost'], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
      const token = created.trim().split('\n').at(-1) ?? '';
      const publicId = new URL(link).pathname.split('/').at(-1) ?? '';
      const reader = openDatabase(dbPath);
      const batchId = reader.prepare('SELECT id FROM batches WHERE public_id = ?').pluck().get(publicId);
      reader.close();
      const analysis = await fetch(`${baseUrl}/api/batches/${String(batchId)}/analysis?max_age=0`, { headers: { authorization: `Bearer ${token}` } });
      expect(analysis.status).toBe(200);
      const report = storedAnalysisReportSchema.parse(await analysis.json());
      expect(report.n_judgments).toBeGreaterThan(0);
      const workers = children(child.pid ?? 0).map(commandLine);
      expect(workers).toEqual([expect.stringContaining(join(root, 'dist/analysis/analysis-worker-boot.mjs'))]);
      expect(workers.join(' ')).not.toMatch(/tsx/);
    } finally {
      expect(await stopServer(child)).toBe(0);
    }
    // No warning or error: an answer thread that could not start, or a worker that failed, would have logged one.
    expect(output().split('\n').filter((line) => /"level":(40|50|60)/.test(line))).toEqual([]);
    const db = openDatabase(dbPath);
    try {
      expect(db.prepare('SELECT count(*) FROM judgments').pluck().get()).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
