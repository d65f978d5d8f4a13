// The Hugging Face card declares the column types of judgments and preferences: `datasets` infers types from a
// file's first ~10 MB block only, and fails when a later block disagrees (a `correct` column all null until the
// gold pairs, an `agreement` of 1 written as a whole number). These tests hold the declaration to what is written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportToPath } from '../../src/export/export-batch.js';
import { makeDialogue, makeJudgment, makePair } from '../helpers/factories.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { makeExportBatch, readJsonl } from './export-fixtures.js';

type Feature = { name: string; dtype?: string; list?: string[] };

/** The `dataset_info` entries of the card's YAML header, read line by line (the card writes one fixed layout). */
function declaredFeatures(card: string): Map<string, Feature[]> {
  const header = card.split('\n---\n')[0] ?? '';
  const lines = header.split('\n');
  const start = lines.indexOf('dataset_info:');
  const configs = new Map<string, Feature[]>();
  if (start < 0) return configs;
  let features: Feature[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^[a-z]/.test(line)) break;
    const config = /^- config_name: (.+)$/.exec(line);
    const name = /^ {2}- name: (.+)$/.exec(line);
    const dtype = /^ {4}dtype: (.+)$/.exec(line);
    const sub = /^ {4}- name: (.+)$/.exec(line);
    const last = features[features.length - 1];
    if (config?.[1]) {
      features = [];
      configs.set(config[1], features);
    } else if (name?.[1]) features.push({ name: name[1] });
    else if (dtype?.[1] && last) last.dtype = dtype[1];
    else if (sub?.[1] && last) (last.list ??= []).push(sub[1]);
  }
  return configs;
}

function fits(value: unknown, feature: Feature): boolean {
  if (value === null) return true;
  if (feature.list) return Array.isArray(value) && value.every((m) => Object.keys(m as object).join(',') === feature.list?.join(','));
  switch (feature.dtype) {
    case 'int64':
      return Number.isInteger(value);
    case 'float64':
      return typeof value === 'number';
    case 'bool':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    default:
      return false;
  }
}

describe('hf dataset card features', () => {
  it('hf, with and without --include-excluded --include-gold --with-provider-ids, declares a type for every judgments and preferences field that the written values fit', async () => {
    const { db } = createTestDb();
    const made = makeExportBatch(db, {
      comparisons: [['SCRIPT:m', 'AGENTS:m']],
      pairs: [
        [0, [{ rater: 0, winner: 'a', reason: 'clear' }, { rater: 1, winner: 'a' }, { rater: 2, winner: 'b' }]],
        [0, [{ rater: 0, winner: 'b' }, { rater: 1, winner: 'b' }]],
      ],
      raterOptions: { 2: { excluded: true, exclusionReason: 'too fast' } },
    });
    const base = made.pairs[0] as { dialogueA: number; scenario: Parameters<typeof makeDialogue>[1]['scenario'] };
    const variant = makeDialogue(db, { runId: made.runId, scenario: base.scenario, mode: 'SCRIPT', model: 'm', sampleIndex: 9 });
    const gold = makePair(db, { batchId: made.batchId, comparisonId: null, dialogueA: base.dialogueA, dialogueB: variant, kind: 'attention', expected: 'a' });
    makeJudgment(db, { pairId: gold, raterId: made.rater(0), winner: 'a' });

    for (const options of [{}, { includeExcluded: true, includeGold: true, withProviderIds: true }]) {
      const dir = join(tempDir(), 'hf');
      await exportToPath(db, { batch: String(made.batchId), format: 'hf', ...options }, dir);
      const declared = declaredFeatures(readFileSync(join(dir, 'README.md'), 'utf8'));
      expect([...declared.keys()]).toEqual(['judgments', 'preferences']);
      for (const [config, features] of declared) {
        const rows = readJsonl(join(dir, 'data', `${config}.jsonl`));
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) {
          expect(Object.keys(row)).toEqual(features.map((f) => f.name));
          for (const feature of features) expect({ config, field: feature.name, fits: fits(row[feature.name], feature) }).toEqual({ config, field: feature.name, fits: true });
        }
      }
      // A unanimous pair's agreement is written as the whole number 1: exactly the value inference would call int64.
      expect(readJsonl(join(dir, 'data', 'preferences.jsonl')).some((r) => r.agreement === 1)).toBe(true);
    }
  });
});
