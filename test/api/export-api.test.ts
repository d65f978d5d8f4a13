import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { makeUser, signIn, tokenFor } from '../auth/session-helpers.js';
import { makeExportBatch, zipEntries, zipRead } from '../export/export-fixtures.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';

// The export as the API and the console's download form serve it: provenance, errors, audit, strict query,
// and the judgments list agreeing with the export.

const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

type AuditRow = { actor: string; action: string; target_id: string; details: string };
const exportAudits = (t: ReturnType<typeof buildTestApp>) =>
  t.db.prepare("SELECT actor, action, target_id, details FROM audit_log WHERE action = 'batch.export' ORDER BY id").all() as AuditRow[];

async function setup() {
  const t = buildTestApp();
  const made = makeExportBatch(t.db, {
    comparisons: [['SCRIPT:m', 'AGENTS:m']],
    pairs: [
      [0, [{ rater: 0, winner: 'a' }, { rater: 1, winner: 'b' }, { rater: 2, winner: 'a' }]],
      [0, [{ rater: 0, winner: 'b' }, { rater: 1, winner: 'tie' }]],
    ],
    raterOptions: { 0: { participantId: 'PID-SECRET-0' }, 2: { status: 'screened_out' } },
  });
  const researcherUser = await makeUser(t.db, 'researcher');
  const adminUser = await makeUser(t.db, 'admin');
  return { t, made, researcher: tokenFor(t.db, researcherUser.email), admin: tokenFor(t.db, adminUser.email), researcherUser, adminUser };
}

describe('GET /api/batches/:id/export and its provenance record', () => {
  it('GET /api/batches/:id/export?format=judgments-csv, as a researcher, links (rel=describedby) to a record of version, prompt versions and batch settings', async () => {
    const { t, made, researcher } = await setup();
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-csv&include_excluded=true&min_margin=2`).set('Authorization', `Bearer ${researcher}`);
    expect(res.status).toBe(200);
    const link = /^<([^>]+)>; rel="describedby"; type="application\/json"$/.exec(String(res.headers.link));
    expect(link?.[1]).toBe(`/api/batches/${made.batchId}/export/meta?format=judgments-csv&include_excluded=1&min_margin=2`);
    const meta = await request(t.app)
      .get(link?.[1] ?? '')
      .set('Authorization', `Bearer ${researcher}`);
    expect(meta.status).toBe(200);
    expect(meta.body).toMatchObject({
      simarena_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      format: 'judgments-csv',
      batch: { id: made.batchId },
      prompt_versions: expect.any(Array),
      batch_settings: expect.objectContaining({ judgmentsPerPair: expect.any(Number) }),
      options: { include_excluded: true, include_gold: false, with_provider_ids: false, majority_only: false, min_margin: 2 },
    });
  });

  it('GET /api/batches/:id/export/meta, with with_provider_ids as a researcher, an unknown batch or a typo, answers 403, 404 or 400', async () => {
    const { t, made, researcher, admin } = await setup();
    const get = (path: string, token: string) => request(t.app).get(path).set('Authorization', `Bearer ${token}`);
    expect((await get(`/api/batches/${made.batchId}/export/meta?format=arena&with_provider_ids=1`, researcher)).status).toBe(403);
    expect((await get(`/api/batches/${made.batchId}/export/meta?format=arena&with_provider_ids=1`, admin)).body.options.with_provider_ids).toBe(true);
    expect((await get('/api/batches/9999/export/meta?format=arena', researcher)).status).toBe(404);
    expect((await get(`/api/batches/${made.batchId}/export/meta?format=arena&withCalls=1`, researcher)).status).toBe(400);
    expect((await request(t.app).get(`/api/batches/${made.batchId}/export/meta?format=arena`)).status).toBe(401);
  });

  it('GET /api/batches/:id/export, for a batch that does not exist (or was deleted), answers 404 JSON without a download name and audits nothing', async () => {
    const { t, made, researcher } = await setup();
    t.db.prepare('DELETE FROM batches WHERE id = ?').run(made.batchId);
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-jsonl`).set('Authorization', `Bearer ${researcher}`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.headers.link).toBeUndefined();
    expect(res.body.error.message).toBe(`no batch with id ${made.batchId}`);
    expect(exportAudits(t)).toEqual([]);
  });

  it('GET /api/batches/:id/export, with a misspelt parameter (includeExcluded=1), answers 400 naming it and exports nothing', async () => {
    const { t, made, researcher } = await setup();
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-csv&includeExcluded=1`).set('Authorization', `Bearer ${researcher}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('unknown parameter includeExcluded');
    expect(res.body.error.message).toContain('include_excluded');
    expect(exportAudits(t)).toEqual([]);
  });

  it('GET /api/batches/:id/export with with_provider_ids, as an admin, is kept in the audit log with the email, format, options and rows', async () => {
    const { t, made, researcher, admin, adminUser } = await setup();
    expect((await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-jsonl&with_provider_ids=1`).set('Authorization', `Bearer ${researcher}`)).status).toBe(403);
    expect(exportAudits(t)).toEqual([]);
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-jsonl&with_provider_ids=1`).set('Authorization', `Bearer ${admin}`);
    expect(res.status).toBe(200);
    expect(res.text.trim().split('\n')).toHaveLength(4);
    const audits = exportAudits(t);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({ actor: adminUser.email, action: 'batch.export', target_id: String(made.batchId) });
    expect(JSON.parse(audits[0]?.details ?? '{}')).toEqual({
      format: 'judgments-jsonl',
      rows: 4,
      complete: true,
      via: 'api',
      options: { include_excluded: false, include_gold: false, with_provider_ids: true, with_calls: false, majority_only: false, min_margin: null },
    });
  });

  it('GET /api/batches/:id/export?format=bundle, as a researcher, carries the same analysis as GET /api/batches/:id/analysis', async () => {
    const { t, made, researcher } = await setup();
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=bundle`).set('Authorization', `Bearer ${researcher}`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    const zip = join(tempDir(), 'bundle.zip');
    writeFileSync(zip, res.body as Buffer);
    expect(zipEntries(zip)).toEqual(expect.arrayContaining(['analysis.json', 'report.html', 'manifest.json']));
    const analysis = await request(t.app).get(`/api/batches/${made.batchId}/analysis`).set('Authorization', `Bearer ${researcher}`).expect(200);
    expect(JSON.parse(zipRead(zip, 'analysis.json').toString('utf8'))).toEqual(analysis.body);
    expect(zipRead(zip, 'report.html').toString('utf8')).toContain('<html');
  });
});

describe('GET /api/batches/:id/judgments and the export', () => {
  it('GET /api/batches/:id/judgments, with a screened-out rater and a removed pair, flags them as the export does and pages through the same rows', async () => {
    const { t, made, researcher } = await setup();
    t.db.prepare("UPDATE pairs SET removed_at = '2026-01-02T00:00:00.000Z' WHERE id = ?").run(made.pairs[1]?.pairId);
    const get = (path: string) => request(t.app).get(path).set('Authorization', `Bearer ${researcher}`).expect(200);
    const pages = [await get(`/api/batches/${made.batchId}/judgments?per_page=3`), await get(`/api/batches/${made.batchId}/judgments?per_page=3&page=2`)];
    expect(pages[0]?.body.pagination).toEqual({ page: 1, per_page: 3, total: 5, pages: 2, next_after: `${String(pages[0]?.body.data[2].pair_id)}.${String(pages[0]?.body.data[2].judgment_id)}` });
    const listed = pages.flatMap((p) => p.body.data as Record<string, unknown>[]);
    expect(listed.map((j) => [j.excluded, j.exclusion_reason])).toEqual([
      [false, null],
      [false, null],
      [true, 'screened out'],
      [true, 'pair removed'],
      [true, 'pair removed'],
    ]);
    const exported = await get(`/api/batches/${made.batchId}/export?format=judgments-jsonl&include_excluded=1&include_gold=1`);
    expect(listed).toEqual(exported.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
    expect(JSON.stringify(listed)).not.toContain('PID-SECRET-0');
  });
});

describe('the console analysis page downloads', () => {
  it('GET /console/batches/:id/analysis, as a researcher, has a GET export form without raw provider ids; as an admin, with them', async () => {
    const { t, made } = await setup();
    const form = (html: string) => /<form method="get" action="\/api\/batches\/\d+\/export"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '';
    const researcher = await signIn(t.app, t.db, 'researcher');
    const asResearcher = form((await researcher.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200)).text);
    for (const name of ['format', 'include_excluded', 'include_gold', 'majority_only', 'min_margin', 'with_calls']) expect(asResearcher).toContain(`name="${name}"`);
    expect(asResearcher).not.toContain('with_provider_ids');
    const admin = await signIn(t.app, t.db, 'admin');
    expect(form((await admin.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200)).text)).toContain('name="with_provider_ids"');

    // What the browser sends for the form (unticked boxes left out, the margin always there), signed in by cookie.
    const sent = await researcher.agent.get(`/api/batches/${made.batchId}/export?format=preferences&include_excluded=1&majority_only=1&min_margin=1`);
    expect(sent.status).toBe(200);
    expect(sent.headers['content-disposition']).toContain(`simarena-batch-${made.batchId}-preferences.jsonl`);
    expect(exportAudits(t).map((a) => [a.actor, (JSON.parse(a.details) as { via: string }).via])).toEqual([[researcher.email, 'console']]);
  });
});
