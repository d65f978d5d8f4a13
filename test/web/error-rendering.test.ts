import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatchWithJudgments, makeRun } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

const root = new URL('../../', import.meta.url).pathname;

describe('one rendering of a user-facing error per channel', () => {
  it('a run whose stored modes are damaged, read by the API, the console and the CLI, answers JSON, an HTML page and one line with the same message', async () => {
    const t = buildTestApp();
    const runId = makeRun(t.db);
    // Valid JSON of the wrong shape: the column's CHECK lets it through, its zod schema (src/db/json-column.ts) does not.
    t.db.prepare('UPDATE runs SET modes = :modes WHERE id = :id').run({ modes: '{"SCRIPT":true}', id: runId });
    const message = `runs.modes of run ${runId} does not have the expected shape`;

    const admin = await signIn(t.app, t.db, 'admin');
    const api = await request(t.app).get(`/api/runs/${runId}`).set('Authorization', `Bearer ${tokenFor(t.db, admin.email)}`);
    expect(api.status).toBe(500);
    expect(api.type).toBe('application/json');
    expect(api.body).toEqual({ error: { message: expect.stringContaining(message), code: 'damaged_data' } });

    const page = await admin.agent.get(`/console/runs/${runId}`);
    expect(page.status).toBe(500);
    expect(page.type).toBe('text/html');
    expect(page.text).toContain(message);
    expect(page.text).not.toMatch(/\n\s+at /);

    const cli = spawnSync(process.execPath, [join(root, 'bin/simarena.js'), 'runs', 'list'], {
      encoding: 'utf8',
      env: { ...process.env, DATABASE_PATH: t.dbPath, LOG_LEVEL: 'silent', DEBUG: '' },
    });
    expect(cli.status).toBe(1);
    expect(cli.stdout).toBe('');
    // One line, the API's message word for word, no stack trace.
    expect(cli.stderr).toBe(`error: ${api.body.error.message}\n`);
  });

  it('a refusal written for the person (BatchError 409) keeps its status and message as a console page and as one CLI line', async () => {
    const t = buildTestApp();
    const admin = await signIn(t.app, t.db, 'admin');
    const batchId = makeBatchWithJudgments(t.db, { votes: [['a']] }).batchId;
    t.db.prepare("UPDATE batches SET state = 'closed' WHERE id = :id").run({ id: batchId });
    const message = `Batch ${batchId} is closed; it cannot be moved to paused.`;

    const page = await admin.agent.post(`/console/batches/${batchId}/pause`).type('form').send({ _csrf: admin.csrf });
    expect(page.status).toBe(409);
    expect(page.type).toBe('text/html');
    expect(page.text).toContain(message);

    const cli = spawnSync(process.execPath, [join(root, 'bin/simarena.js'), 'batches', 'pause', String(batchId)], {
      encoding: 'utf8',
      env: { ...process.env, DATABASE_PATH: t.dbPath, LOG_LEVEL: 'silent', DEBUG: '' },
    });
    expect({ status: cli.status, stderr: cli.stderr }).toEqual({ status: 1, stderr: `error: ${message}\n` });
    expect(t.db.prepare('SELECT state FROM batches WHERE id = :id').pluck().get({ id: batchId })).toBe('closed');
  });
});
