import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { characterSchema, factSchema, scenarioSchema } from '../../src/scenarios/scenario.schema.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const DOC = new URL('../../docs/reference/scenario-format.md', import.meta.url);

/** The doc's one ```json block: the complete example. */
function docExample(): string {
  const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  expect(blocks).toHaveLength(1);
  return blocks[0] as string;
}

function writeFile(name: string, content: unknown): string {
  const path = join(tempDir(), name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('docs/reference/scenario-format.md', () => {
  it('documents every field of a character, a scenario and a fact, and its example uses every one of them', () => {
    const doc = readFileSync(DOC, 'utf8');
    const example = JSON.parse(docExample()) as Record<string, unknown>[];
    const used = new Set(example.flatMap((record) => [...Object.keys(record), ...((record.facts as Record<string, unknown>[] | undefined) ?? []).flatMap((f) => Object.keys(f))]));
    for (const schema of [characterSchema, scenarioSchema, factSchema]) {
      for (const key of Object.keys(schema.shape)) {
        expect(doc, key).toContain(`| \`${key}\` |`);
        expect(used.has(key), key).toBe(true);
      }
    }
  });

  it('scenarios import FILE, given the complete example of the doc, stores its two characters and its scenario with its cast and facts', async () => {
    const { db, path } = createTestDb();
    const file = writeFile('bicycle.json', docExample());
    const imported = await cli(['scenarios', 'import', file], { DATABASE_PATH: path });
    expect(imported).toMatchObject({ code: 0, stdout: 'Imported 1 scenario(s) and 2 character(s).' });
    expect(db.prepare("SELECT first_name, age, secret FROM characters WHERE id IN ('ines-moreau', 'tobi-adeyemi') ORDER BY id").all()).toEqual([
      { first_name: 'Ines', age: 29, secret: 'She is quietly planning to close the stand and move abroad next spring.' },
      { first_name: 'Tobi', age: null, secret: 'He failed his qualifying exam once and has told no one.' },
    ]);
    expect(db.prepare("SELECT category, relationship FROM scenarios WHERE id = 'used-bicycle-sale'").get()).toEqual({ category: 'competitive', relationship: 'stranger' });
    expect(db.prepare("SELECT character_1_id, character_2_id FROM casts WHERE scenario_id = 'used-bicycle-sale'").all()).toEqual([{ character_1_id: 'ines-moreau', character_2_id: 'tobi-adeyemi' }]);
    expect(db.prepare("SELECT count(*) FROM scenario_facts WHERE scenario_id = 'used-bicycle-sale'").pluck().get()).toBe(4);
  });
});

describe('simarena scenarios import, given a file of the wrong shape', () => {
  const env = () => ({ DATABASE_PATH: createTestDb().path });
  /** What every refusal of a shape shows: both kinds' fields and where they are described. */
  const showsShape = (message: string) => {
    for (const part of ['"firstName"', '"lastName"?', '"goals"', '"casts"', '"facts"?', 'docs/reference/scenario-format.md']) expect(message).toContain(part);
  };

  it('an object of scenarios instead of a list is refused with the fields a character and a scenario have, and nothing stored', async () => {
    const file = writeFile('wrapped.json', { scenarios: [{ id: 'x' }] });
    const result = await cli(['scenarios', 'import', file], env());
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toHaveLength(1);
    showsShape(result.stderr);
  });

  it('a record of no known kind is refused naming the record and showing the expected fields', async () => {
    const file = writeFile('odd.json', [{ name: 'Ines', role: 'seller' }]);
    const result = await cli(['scenarios', 'import', file], env());
    expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining(': record 1: not a Sotopia EnvironmentProfile') });
    showsShape(result.stderr);
  });

  it('a scenario with a misspelt key is refused naming the key and the fields a scenario has', async () => {
    const example = JSON.parse(docExample()) as Record<string, unknown>[];
    const scenario = { ...example[2], setting: 'a market' };
    const file = writeFile('misspelt.json', [example[0], example[1], scenario]);
    const { db, path } = createTestDb();
    const result = await cli(['scenarios', 'import', file], { DATABASE_PATH: path });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('record 3 ("used-bicycle-sale")');
    expect(result.stderr).toContain('unknown key(s) "setting": a record here has the fields "id", "title", "category", "context", "relationship", "goals", "casts", "facts"?');
    expect(db.prepare("SELECT count(*) FROM characters WHERE id = 'ines-moreau'").pluck().get()).toBe(0);
  });
});
