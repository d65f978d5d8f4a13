import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScenarioFileError } from '../../src/scenarios/library-error.js';
import { builtInLibraryDir, installLibrary, readJsonFile, readLibrary } from '../../src/scenarios/load-library.js';
import { listCasts, listScenarios } from '../../src/scenarios/scenario.queries.js';
import { importProfiles } from '../../src/scenarios/sotopia-import.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const fixtures = new URL('../fixtures/sotopia/', import.meta.url).pathname;
const sotopiaFiles = () =>
  ['environments.json', 'agents.json'].map((f) => ({ path: join(fixtures, f), data: readJsonFile(join(fixtures, f)) }));

describe('the built-in scenario library', () => {
  it('validates and covers every category with at least 8 scenarios and 16 distinct characters', () => {
    const library = readLibrary(builtInLibraryDir);
    for (const category of ['cooperative', 'competitive', 'mixed']) {
      expect(library.scenarios.filter((s) => s.category === category).length).toBeGreaterThanOrEqual(8);
    }
    expect(new Set(library.scenarios.flatMap((s) => s.casts.flat())).size).toBeGreaterThanOrEqual(16);
    expect(new Set(library.scenarios.map((s) => s.relationship)).size).toBe(6);
  });

  it('installs into the database with its casts, and installing twice changes nothing', () => {
    const { db } = createTestDb();
    const library = readLibrary(builtInLibraryDir);
    installLibrary(db, library, 'simarena', new Date().toISOString());
    installLibrary(db, library, 'simarena', new Date().toISOString());
    const rows = listScenarios(db);
    expect(rows).toHaveLength(library.scenarios.length);
    expect(rows.reduce((n, s) => n + s.casts, 0)).toBe(library.scenarios.reduce((n, s) => n + s.casts.length, 0));
  });
});

describe('readLibrary, with a corrupt file', () => {
  function libraryWith(characters: unknown, scenarios: unknown): string {
    const dir = tempDir();
    writeFileSync(join(dir, 'characters.json'), JSON.stringify(characters));
    writeFileSync(join(dir, 'mixed.json'), typeof scenarios === 'string' ? scenarios : JSON.stringify(scenarios));
    return dir;
  }
  const ann = { id: 'ann', firstName: 'Ann' };
  const bob = { id: 'bob', firstName: 'Bob' };
  const scenario = { id: 'chat', title: 'Chat', category: 'mixed', context: 'A chat.', relationship: 'friend', goals: ['g1', 'g2'], casts: [['ann', 'bob']] };

  it('names the file, the record and the field', () => {
    const dir = libraryWith([ann, bob], [scenario, { ...scenario, id: 'second', relationship: 'enemies' }]);
    expect(() => readLibrary(dir)).toThrow(ScenarioFileError);
    expect(() => readLibrary(dir)).toThrow(`${join(dir, 'mixed.json')}: record 2 ("second"): field "relationship"`);
  });

  it('rejects invalid JSON with the file named', () => {
    const dir = libraryWith([ann, bob], '[{"id": ');
    expect(() => readLibrary(dir)).toThrow(`${join(dir, 'mixed.json')}: is not valid JSON`);
  });

  it('rejects a cast naming an unknown character', () => {
    const dir = libraryWith([ann], [scenario]);
    expect(() => readLibrary(dir)).toThrow('field "casts" names unknown character "bob"');
  });

  it('rejects a bad slug and a scenario with one goal', () => {
    expect(() => readLibrary(libraryWith([{ ...ann, id: 'Ann Smith' }, bob], [scenario]))).toThrow('record 1 ("Ann Smith"): field "id" must be a slug');
    expect(() => readLibrary(libraryWith([ann, bob], [{ ...scenario, goals: ['only one'] }]))).toThrow('field "goals');
  });
});

describe('importProfiles (Sotopia EnvironmentProfile + AgentProfile)', () => {
  it('keeps codenames as slugs, maps relationships, and casts by agent_constraint', () => {
    const library = importProfiles(sotopiaFiles(), { pairsPerScenario: 5, seed: 1 });
    expect(library.characters.map((c) => c.id)).toEqual(['ana-silva', 'ben-okoro', 'chen-li']);
    expect(library.characters[2]).toMatchObject({ pronouns: 'They/them', secret: 'Is applying for jobs abroad.' });
    const [borrow, bike] = library.scenarios;
    expect(borrow).toMatchObject({ id: 'borrow_money', relationship: 'friend', category: 'mixed' });
    // agent_constraint allows agent-1 or agent-2 first and agent-3 second: exactly two casts exist.
    expect(borrow?.casts.sort()).toEqual([
      ['ana-silva', 'chen-li'],
      ['ben-okoro', 'chen-li'],
    ]);
    expect(bike).toMatchObject({ id: 'craigslist-bike-sale', relationship: 'stranger' });
    expect(bike?.casts).toHaveLength(5);
    expect(new Set(bike?.casts.map((c) => c.join()))).toHaveProperty('size', 5);
  });

  it('draws the same casts for the same seed and other casts for another seed', () => {
    const pick = (seed: number) => importProfiles(sotopiaFiles(), { pairsPerScenario: 2, seed }).scenarios[1]?.casts;
    expect(pick(7)).toEqual(pick(7));
    const draws = new Set([1, 2, 3, 4, 5, 6, 7, 8].map((s) => JSON.stringify(pick(s))));
    expect(draws.size).toBeGreaterThan(1);
  });

  it('applies --category and installs into the database', () => {
    const { db } = createTestDb();
    const library = importProfiles(sotopiaFiles(), { pairsPerScenario: 1, seed: 0, category: 'competitive' });
    installLibrary(db, library, 'import', new Date().toISOString());
    expect(listScenarios(db).map((s) => [s.id, s.category])).toEqual([
      ['borrow_money', 'competitive'],
      ['craigslist-bike-sale', 'competitive'],
    ]);
    expect(listCasts(db, 'borrow_money')).toHaveLength(1);
  });

  it('rejects malformed records naming the file, the record and the field', () => {
    const env = { codename: 'x', scenario: 'S', agent_goals: ['only one'], relationship: 0 };
    expect(() => importProfiles([{ path: 'envs.json', data: [env] }, ...sotopiaFiles().slice(1)], { pairsPerScenario: 1, seed: 0 })).toThrow(
      'envs.json: record 1 ("x"): field "agent_goals" must hold exactly two goals',
    );
    expect(() =>
      importProfiles([{ path: 'envs.json', data: [{ ...env, agent_goals: ['a', 'b'], relationship: 9 }] }, ...sotopiaFiles().slice(1)], { pairsPerScenario: 1, seed: 0 }),
    ).toThrow('envs.json: record 1 ("x"): field "relationship" must be 0-5');
    expect(() => importProfiles([{ path: 'agents.json', data: [{ pk: 'p', first_name: 'A', age: 'old' }] }], { pairsPerScenario: 1, seed: 0 })).toThrow(
      'agents.json: record 1 ("p"): field "age"',
    );
    expect(() => importProfiles([{ path: 'odd.json', data: [{ hello: 1 }] }], { pairsPerScenario: 1, seed: 0 })).toThrow('odd.json: record 1: not a Sotopia');
    expect(() => importProfiles([{ path: 'envs.json', data: [{ ...env, agent_goals: ['a', 'b'] }] }], { pairsPerScenario: 1, seed: 0 })).toThrow(
      'need at least two AgentProfile records',
    );
  });
});
