import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeExportBatch } from './export-fixtures.js';

function setup() {
  const { db, path } = createTestDb();
  const made = makeExportBatch(db, {
    comparisons: [['SCRIPT:m', 'AGENTS:m']],
    pairs: [
      [0, [{ rater: 0, winner: 'a' }, { rater: 1, winner: 'b' }]],
      [0, [{ rater: 0, winner: 'a' }, { rater: 1, winner: 'a' }]],
    ],
    raterOptions: { 1: { excluded: true, exclusionReason: 'speeding' } },
  });
  return { db, made, env: { DATABASE_PATH: path } };
}

describe('simarena export', () => {
  it('simarena export --format judgments-csv, for a batch, writes the file and its sidecar, prints one line and records an audit entry', async () => {
    const { db, made, env } = setup();
    const out = join(tempDir(), 'j.csv');
    const result = await cli(['export', '--batch', String(made.batchId), '--format', 'judgments-csv', '--out', out], env);
    expect(result).toMatchObject({ code: 0, stdout: `Exported 2 row(s) of batch ${made.batchId} as judgments-csv: ${out}, ${out}.meta.json` });
    expect(parse(readFileSync(out), { columns: true })).toHaveLength(2);
    const audit = db.prepare("SELECT actor, target_id, details FROM audit_log WHERE action = 'batch.export'").all() as { actor: string; target_id: string; details: string }[];
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'cli', target_id: String(made.batchId) });
    expect(JSON.parse(audit[0]?.details ?? '{}')).toMatchObject({ format: 'judgments-csv', rows: 2 });
  });

  it('simarena export with --include-excluded --with-provider-ids, for a batch, adds the excluded judgments and the raw ids', async () => {
    const { made, env } = setup();
    const out = join(tempDir(), 'j.csv');
    const result = await cli(['export', '--batch', String(made.batchId), '--format', 'judgments-csv', '--out', out, '--include-excluded', '--with-provider-ids'], env);
    expect(result.code).toBe(0);
    const rows = parse(readFileSync(out), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.exclusion_reason === 'speeding')).toHaveLength(2);
    expect(rows.every((r) => (r.participant_id ?? '').startsWith('participant-'))).toBe(true);
  });

  it('simarena export --format acute and hf, for a batch, writes folders; --format preferences honours --majority-only and --min-margin', async () => {
    const { made, env } = setup();
    const dir = tempDir();
    expect((await cli(['export', '--batch', made.publicId, '--format', 'acute', '--out', join(dir, 'acute')], env)).code).toBe(0);
    expect(readdirSync(join(dir, 'acute')).sort()).toEqual(['grid.csv', 'meta.json', 'significance.csv']);
    expect((await cli(['export', '--batch', String(made.batchId), '--format', 'hf', '--out', join(dir, 'hf')], env)).code).toBe(0);
    expect(readdirSync(join(dir, 'hf', 'data')).sort()).toEqual(['dialogues.jsonl', 'judgments.jsonl', 'preferences.jsonl']);
    const prefs = await cli(['export', '--batch', String(made.batchId), '--format', 'preferences', '--out', join(dir, 'p.jsonl'), '--majority-only', '--min-margin', '2'], env);
    expect(prefs).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Exported 0 row\(s\)/) });
  });

  it('simarena export, for an unknown format, an unknown batch or a bad --min-margin, exits 1 with one line and writes nothing', async () => {
    const { made, env } = setup();
    const dir = tempDir();
    const badFormat = await cli(['export', '--batch', String(made.batchId), '--format', 'xlsx', '--out', join(dir, 'x')], env);
    expect(badFormat).toMatchObject({ code: 1, stderr: 'error: format must be one of judgments-csv, judgments-jsonl, arena, acute, preferences, dialogues, sotopia, hf, bundle' });
    const badBatch = await cli(['export', '--batch', '4242', '--format', 'arena', '--out', join(dir, 'x')], env);
    expect(badBatch).toMatchObject({ code: 1, stderr: 'error: No batch has the id or name "4242" (see "simarena batches list").' });
    const badMargin = await cli(['export', '--batch', String(made.batchId), '--format', 'preferences', '--min-margin', 'two', '--out', join(dir, 'x')], env);
    expect(badMargin).toMatchObject({ code: 1, stderr: 'error: --min-margin must be a whole number of at least 1' });
    const unwritable = await cli(['export', '--batch', String(made.batchId), '--format', 'arena', '--out', join(dir, 'missing', 'x.json')], env);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/^error: cannot write .*missing\/x\.json: the folder .* does not exist$/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('simarena export --help, asked for, lists every format and option', async () => {
    const result = await cli(['export', '--help']);
    expect(result.code).toBe(0);
    for (const text of ['judgments-csv|judgments-jsonl|arena|acute|preferences|dialogues|sotopia|hf|bundle', '--include-excluded', '--include-gold', '--with-provider-ids', '--with-calls', '--majority-only', '--min-margin'])
      expect(result.stdout).toContain(text);
  });
});
