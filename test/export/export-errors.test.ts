import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExportError, exportToPath } from '../../src/export/export-batch.js';
import { writeText } from '../../src/export/folder-sink.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeExportBatch } from './export-fixtures.js';
import { rejectionOf } from '../helpers/rejection.js';

const onePair = (db: Parameters<typeof makeExportBatch>[0]) =>
  makeExportBatch(db, { comparisons: [['SCRIPT:m', 'AGENTS:m']], pairs: [[0, [{ rater: 0, winner: 'a' }]]] });

const failure = (promise: Promise<unknown>) => rejectionOf(promise, ExportError);

describe('export bad input', () => {
  it('exportToPath, for an unknown format, fails with the list of formats and writes nothing', async () => {
    const { db } = createTestDb();
    const made = onePair(db);
    const dir = tempDir();
    const error = await failure(exportToPath(db, { batch: String(made.batchId), format: 'xlsx' as 'arena' }, join(dir, 'out.xlsx')));
    expect(error.message).toBe('format must be one of judgments-csv, judgments-jsonl, arena, acute, preferences, dialogues, sotopia, hf, bundle');
    expect(error.status).toBe(400);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('exportToPath, for an unknown batch, fails with 404 and writes nothing', async () => {
    const { db } = createTestDb();
    onePair(db);
    const dir = tempDir();
    const error = await failure(exportToPath(db, { batch: '999', format: 'judgments-csv' }, join(dir, 'out.csv')));
    expect(error).toMatchObject({ message: 'no batch with id 999', status: 404 });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('exportToPath, to a folder that does not exist or under a file, fails with the path and leaves nothing', async () => {
    const { db } = createTestDb();
    const made = onePair(db);
    const dir = tempDir();
    const missing = await failure(exportToPath(db, { batch: String(made.batchId), format: 'judgments-csv' }, join(dir, 'nope', 'out.csv')));
    expect(missing.message).toBe(`cannot write ${join(dir, 'nope', 'out.csv')}: the folder ${join(dir, 'nope')} does not exist`);
    writeFileSync(join(dir, 'a-file'), 'x');
    const underFile = await failure(exportToPath(db, { batch: String(made.batchId), format: 'hf' }, join(dir, 'a-file', 'hf')));
    expect(underFile.message).toMatch(/^cannot write .*a-file\/hf: /);
    expect(readdirSync(dir)).toEqual(['a-file']);
  });

  it('exportToPath, into a folder that already holds files, refuses and leaves them untouched', async () => {
    const { db } = createTestDb();
    const made = onePair(db);
    const target = join(tempDir(), 'acute');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'mine');
    const error = await failure(exportToPath(db, { batch: String(made.batchId), format: 'acute' }, target));
    expect(error).toMatchObject({ status: 409, message: `cannot write ${target}: it already exists and is not an empty folder` });
    expect(readdirSync(target)).toEqual(['notes.txt']);
    expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('exportToPath, when a bundle fails halfway, removes its temporary archive and leaves no partial file', async () => {
    const { db } = createTestDb();
    const made = onePair(db);
    const dir = tempDir();
    // analysis.json's writer fails after judgments.csv, dialogues.jsonl and the cards went into the archive.
    let released = 0;
    const analysis = {
      json: async (out: NodeJS.WritableStream) => {
        out.write('{"schema_version":');
        throw new Error('analysis broke');
      },
      html: writeText('<html></html>'),
      release: () => {
        released += 1;
      },
    };
    await expect(exportToPath(db, { batch: String(made.batchId), format: 'bundle' }, join(dir, 'b.zip'), { analysis })).rejects.toThrow('analysis broke');
    expect(readdirSync(dir)).toEqual([]);
    // The analysis files' owner is told the export is over, once.
    expect(released).toBe(1);
  });

  it('exportToPath, when a file format fails halfway (a dialogue lost its cast), leaves no partial file and no sidecar', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [
        [0, [{ rater: 0, winner: 'a' }]],
        [0, [{ rater: 0, winner: 'b' }]],
      ],
    });
    db.pragma('foreign_keys = OFF');
    db.prepare('DELETE FROM casts WHERE id = :id').run({ id: made.pairs[1]?.scenario.castId });
    db.pragma('foreign_keys = ON');
    const dir = tempDir();
    await expect(exportToPath(db, { batch: String(made.batchId), format: 'arena' }, join(dir, 'arena.json'))).rejects.toThrow(/cast is missing/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('exportToPath, with --min-margin below 1, fails naming the option', async () => {
    const { db } = createTestDb();
    const made = onePair(db);
    const error = await failure(exportToPath(db, { batch: String(made.batchId), format: 'preferences', minMargin: 0 }, join(tempDir(), 'p.jsonl')));
    expect(error.message).toMatch(/^minMargin: /);
  });
});
