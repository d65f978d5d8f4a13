import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  EXPORT_FORMATS,
  ExportError,
  buildExportMeta,
  checkExport,
  exportContentType,
  exportFilename,
  exportToPath,
  writeExport,
} from '../../src/export/export-batch.js';
import { makeJudgment, makeRater } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeExportBatch, zipEntries, zipRead } from './export-fixtures.js';

/** A destination that takes one small chunk at a time and answers later, so the exporter must respect backpressure. */
function slowSink(options: { hold?: Promise<void> } = {}) {
  const chunks: Buffer[] = [];
  let writes = 0;
  const sink = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      writes++;
      const go = () => setImmediate(callback);
      if (writes === 1 && options.hold) void options.hold.then(go);
      else go();
    },
  });
  return { sink, text: () => Buffer.concat(chunks).toString('utf8'), buffer: () => Buffer.concat(chunks) };
}

const batchOf = (db: Parameters<typeof makeExportBatch>[0]) =>
  makeExportBatch(db, {
    comparisons: [['SCRIPT:m', 'AGENTS:m']],
    pairs: [
      [0, [{ rater: 0, winner: 'a', reason: 'a, "b"\nc ✓' }, { rater: 1, winner: 'b' }]],
      [0, [{ rater: 0, winner: 'b' }]],
    ],
  });

describe('writeExport (the API and console entry point)', () => {
  it('writeExport, for every single-file format into a slow destination, streams the same bytes exportToPath writes', async () => {
    const { db } = createTestDb();
    const made = batchOf(db);
    const now = () => new Date('2026-03-01T00:00:00Z');
    for (const format of ['judgments-csv', 'judgments-jsonl', 'arena', 'preferences', 'dialogues', 'sotopia'] as const) {
      const { sink, text } = slowSink();
      const result = await writeExport(db, { batch: String(made.batchId), format }, sink, { now });
      const path = join(tempDir(), `out.${format}`);
      const onDisk = await exportToPath(db, { batch: String(made.batchId), format }, path, { now });
      expect(text()).toBe(readFileSync(path, 'utf8'));
      expect(result.rows).toBe(onDisk.rows);
      expect(sink.writableFinished).toBe(true);
    }
  });

  it('writeExport, for the folder formats, sends one zip archive holding the folder', async () => {
    const { db } = createTestDb();
    const made = batchOf(db);
    const expected = {
      acute: ['grid.csv', 'meta.json', 'significance.csv'],
      hf: ['README.md', 'data/dialogues.jsonl', 'data/judgments.jsonl', 'data/preferences.jsonl', 'simarena-meta.json'],
    };
    for (const format of ['acute', 'hf', 'bundle'] as const) {
      const { sink, buffer } = slowSink();
      await writeExport(db, { batch: String(made.batchId), format }, sink);
      const zip = join(tempDir(), 'x.zip');
      writeFileSync(zip, buffer());
      const entries = zipEntries(zip);
      if (format === 'bundle') expect(entries).toContain('manifest.json');
      else expect(entries).toEqual(expected[format]);
    }
  });

  it('writeExport, for a bundle whose judgments.csv spans many of the blocks a file is passed on in, sends that file whole: byte for byte the judgments-csv export, with the size and SHA-256 the manifest gives', async () => {
    const { db } = createTestDb();
    const votes = Array.from({ length: 400 }, (_, rater) => ({ rater, winner: rater % 3 === 0 ? ('b' as const) : ('a' as const), reason: `reason ${rater}: ${'why '.repeat(rater % 40)}` }));
    const made = makeExportBatch(db, { comparisons: [['SCRIPT:m', 'AGENTS:m']], pairs: [[0, votes], [0, votes], [0, votes]] });
    const now = () => new Date('2026-03-01T00:00:00Z');
    const csv = slowSink();
    await writeExport(db, { batch: String(made.batchId), format: 'judgments-csv' }, csv.sink, { now });
    const bundle = slowSink();
    await writeExport(db, { batch: String(made.batchId), format: 'bundle' }, bundle.sink, { now });
    const zip = join(tempDir(), 'bundle.zip');
    writeFileSync(zip, bundle.buffer());

    const inZip = zipRead(zip, 'judgments.csv');
    expect(inZip.length).toBeGreaterThan(4 * 64 * 1024);
    expect(inZip.equals(csv.buffer())).toBe(true);
    const manifest = JSON.parse(zipRead(zip, 'manifest.json').toString('utf8')) as { files: { path: string; bytes: number; sha256: string }[] };
    expect(manifest.files.find((f) => f.path === 'judgments.csv')).toEqual({ path: 'judgments.csv', bytes: inZip.length, sha256: createHash('sha256').update(inZip).digest('hex') });
    for (const file of manifest.files) expect(createHash('sha256').update(zipRead(zip, file.path)).digest('hex')).toBe(file.sha256);
  });

  it('writeExport, while paused by a slow client, lets the app keep writing and exports the snapshot it started from', async () => {
    const { db } = createTestDb();
    const made = batchOf(db);
    let release = () => {};
    const hold = new Promise<void>((resolve) => (release = resolve));
    const { sink, text } = slowSink({ hold });
    const exporting = writeExport(db, { batch: String(made.batchId), format: 'judgments-jsonl' }, sink);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A new judgment arrives mid-export: the write must succeed on the app's connection.
    const late = makeJudgment(db, { pairId: made.pairs[1]?.pairId as number, raterId: makeRater(db, { batchId: made.batchId }), winner: 'a' });
    release();
    const result = await exporting;
    expect(result.rows).toBe(3);
    expect(text().trim().split('\n')).toHaveLength(3);
    expect(text()).not.toContain(`"judgment_id":${late},`);
  });

  it('writeExport, when the client goes away mid-stream, rejects instead of hanging', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, { comparisons: [['SCRIPT:m', 'AGENTS:m']], pairs: Array.from({ length: 30 }, () => [0, [{ rater: 0, winner: 'a' as const }]] as [number, { rater: number; winner: 'a' }[]]) });
    const sink = new Writable({
      highWaterMark: 16,
      write(_chunk, _encoding, callback) {
        setImmediate(() => {
          sink.destroy();
          callback();
        });
      },
    });
    await expect(writeExport(db, { batch: String(made.batchId), format: 'arena' }, sink)).rejects.toThrow(/closed/);
  });

  it('checkExport, for bad options or an unknown batch, throws an ExportError with a 400 or 404 before anything is sent', () => {
    const { db } = createTestDb();
    const made = batchOf(db);
    expect(checkExport(db, { batch: made.publicId, format: 'hf' })).toMatchObject({ batch: { id: made.batchId }, options: { format: 'hf', includeGold: false } });
    expect(() => checkExport(db, { batch: String(made.batchId), format: 'pdf' })).toThrow(ExportError);
    expect(() => checkExport(db, { batch: String(made.batchId), format: 'arena', surprise: true })).toThrow(/surprise/);
    try {
      checkExport(db, { batch: 'no-such-batch', format: 'arena' });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 404, message: 'no batch with id no-such-batch' });
    }
  });

  it('buildExportMeta, for a single-file format, gives the record the sidecar holds, without the row count', async () => {
    const { db } = createTestDb();
    const made = batchOf(db);
    const now = () => new Date('2026-03-01T00:00:00Z');
    const path = join(tempDir(), 'j.csv');
    await exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, path, { now });
    const sidecar = JSON.parse(readFileSync(`${path}.meta.json`, 'utf8')) as Record<string, unknown>;
    const { rows, ...withoutRows } = sidecar;
    expect(rows).toBe(3);
    expect(buildExportMeta(db, { batch: String(made.batchId), format: 'judgments-csv' }, { now })).toEqual(withoutRows);
  });

  it('exportContentType and exportFilename, for every format, name a type and a header-safe file', () => {
    const types = Object.fromEntries(EXPORT_FORMATS.map((f) => [f, exportContentType(f)]));
    expect(types).toEqual({
      'judgments-csv': 'text/csv; charset=utf-8',
      'judgments-jsonl': 'application/x-ndjson; charset=utf-8',
      arena: 'application/json; charset=utf-8',
      acute: 'application/zip',
      preferences: 'application/x-ndjson; charset=utf-8',
      dialogues: 'application/x-ndjson; charset=utf-8',
      sotopia: 'application/json; charset=utf-8',
      hf: 'application/zip',
      bundle: 'application/zip',
    });
    for (const f of EXPORT_FORMATS) expect(exportFilename({ id: 12 }, f)).toMatch(/^simarena-batch-12-[a-z-]+\.(csv|jsonl|json|zip)$/);
    expect(exportFilename({ id: 12 }, 'hf')).toBe('simarena-batch-12-hf.zip');
  });
});
