import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { makeUser, tokenFor } from '../auth/session-helpers.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { makeExportBatch, zipEntries } from './export-fixtures.js';

/** Collects a binary response body (supertest buffers text only). */
const binary = (res: request.Response, callback: (error: Error | null, body: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => callback(null, Buffer.concat(chunks)));
};

async function setup() {
  const t = buildTestApp();
  const made = makeExportBatch(t.db, {
    comparisons: [['SCRIPT:m', 'AGENTS:m']],
    pairs: [
      [0, [{ rater: 0, winner: 'a', reason: 'warm, "natural"\nreally' }, { rater: 1, winner: 'b' }]],
      [0, [{ rater: 0, winner: 'b' }]],
    ],
    raterOptions: { 0: { participantId: 'PID-SECRET-0' } },
  });
  const researcher = tokenFor(t.db, (await makeUser(t.db, 'researcher')).email);
  const admin = tokenFor(t.db, (await makeUser(t.db, 'admin')).email);
  return { t, made, researcher, admin };
}

describe('GET /api/batches/:id/export', () => {
  it('GET /api/batches/:id/export?format=judgments-csv, as a researcher, streams the CSV with its type and a download name', async () => {
    const { t, made, researcher } = await setup();
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=judgments-csv`).set('Authorization', `Bearer ${researcher}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="?simarena-batch-${made.batchId}-judgments-csv\\.csv"?$`));
    const rows = parse(res.text, { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(3);
    expect(rows[0]?.reason).toBe('warm, "natural"\nreally');
    expect(res.text).not.toContain('PID-SECRET-0');
  });

  it('GET /api/batches/:id/export with with_provider_ids, as a researcher, is refused; as an admin, carries the raw ids', async () => {
    const { t, made, researcher, admin } = await setup();
    const path = `/api/batches/${made.batchId}/export?format=judgments-jsonl&with_provider_ids=1`;
    const refused = await request(t.app).get(path).set('Authorization', `Bearer ${researcher}`);
    expect(refused.status).toBe(403);
    const allowed = await request(t.app).get(path).set('Authorization', `Bearer ${admin}`);
    expect(allowed.status).toBe(200);
    expect(allowed.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const rows = allowed.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.filter((r) => r.participant_id === 'PID-SECRET-0')).toHaveLength(2);
  });

  it('GET /api/batches/:id/export?format=hf, as a researcher, sends the folder as one zip archive', async () => {
    const { t, made, researcher } = await setup();
    const res = await request(t.app).get(`/api/batches/${made.batchId}/export?format=hf`).set('Authorization', `Bearer ${researcher}`).buffer(true).parse(binary);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/zip');
    const zip = join(tempDir(), 'hf.zip');
    writeFileSync(zip, res.body as Buffer);
    expect(zipEntries(zip)).toEqual(['README.md', 'data/dialogues.jsonl', 'data/judgments.jsonl', 'data/preferences.jsonl', 'simarena-meta.json']);
  });

  it('GET /api/batches/:id/export, with an unknown format or for an unknown batch, answers 400 or 404 JSON', async () => {
    const { t, made, researcher } = await setup();
    const badFormat = await request(t.app).get(`/api/batches/${made.batchId}/export?format=xlsx`).set('Authorization', `Bearer ${researcher}`);
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.error.message).toContain('format must be one of judgments-csv');
    const unknown = await request(t.app).get('/api/batches/9999/export?format=arena').set('Authorization', `Bearer ${researcher}`);
    expect(unknown.status).toBe(404);
  });
});
