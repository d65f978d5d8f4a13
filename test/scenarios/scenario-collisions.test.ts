// An imported scenario whose slug (or Sotopia pk) names a scenario already in the library follows the characters'
// collision rules, and is never replaced under dialogues written for its text (their raters would read a context and
// goals the model never saw). Sotopia files are the fixtures of test/fixtures/sotopia/ (see its README.md), changed
// where a test needs another text under the same pk.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const fixtures = new URL('../fixtures/sotopia/', import.meta.url).pathname;
const library = new URL('../../data/scenarios/', import.meta.url).pathname;
const profiles = readdirSync(join(fixtures, 'profiles')).map((f) => join(fixtures, 'profiles', f));
const ENV_PK = '01H7VFHN5WVC5HKKVBHZBA553R';
const envProfile = join(fixtures, 'profiles', `${ENV_PK}.json`);
const agentProfiles = profiles.filter((p) => p !== envProfile);
const ORIGINAL_TEXT = "Two neighbours meet by the lift. One is holding a stack of 'lost cat' posters.";
const CHANGED_TEXT = 'Two neighbours meet in the car park. One is holding a stack of lost dog posters.';

function freshDb() {
  const { db, path } = createTestDb();
  return { db, env: { DATABASE_PATH: path } };
}
type TestDb = ReturnType<typeof freshDb>['db'];
const one = (db: TestDb, sql: string, ...params: unknown[]) => db.prepare(sql).pluck().get(...params);
const all = (db: TestDb, sql: string, ...params: unknown[]) => db.prepare(sql).all(...params);
/** Everything an import could write, to show that a refused one wrote nothing. */
const snapshot = (db: TestDb) => ({
  scenarios: all(db, 'SELECT id, title, context, goal_1, goal_2, source FROM scenarios ORDER BY id'),
  characters: all(db, 'SELECT id, occupation FROM characters ORDER BY id'),
  casts: all(db, 'SELECT scenario_id, character_1_id, character_2_id FROM casts ORDER BY id'),
  facts: all(db, 'SELECT scenario_id, value FROM scenario_facts ORDER BY scenario_id, position'),
  aliases: all(db, 'SELECT alias, scenario_id FROM scenario_aliases ORDER BY alias'),
});

/** The lost-cat environment profile with another text under the same pk (and codename unless given). */
function changedEnvironment(changes: Record<string, unknown> = {}): string {
  const env = JSON.parse(readFileSync(envProfile, 'utf8')) as Record<string, unknown>;
  const file = join(tempDir(), 'changed-environment.json');
  writeFileSync(file, JSON.stringify([{ ...env, scenario: CHANGED_TEXT, ...changes }]));
  return file;
}

/** A third agent, new to the library, so that a refused import can be seen to store no character either. */
function newAgent(): string {
  const file = join(tempDir(), 'new-agent.json');
  writeFileSync(file, JSON.stringify([{ pk: '01H5TNE5PNEWAGENT000000000', first_name: 'Ines', last_name: 'Moreau', occupation: 'Baker' }]));
  return file;
}

/** A simarena library file. */
function simarenaFile(records: unknown[]): string {
  const file = join(tempDir(), 'mine.json');
  writeFileSync(file, JSON.stringify(records));
  return file;
}
const builtInScenario = () => {
  const scenarios = JSON.parse(readFileSync(join(library, 'cooperative.json'), 'utf8')) as { id: string; casts: string[][] }[];
  return scenarios.find((s) => s.id === 'mutual-friend-conference-lunch') as Record<string, unknown> & { id: string; casts: string[][] };
};

describe('simarena scenarios import, scenario collisions in simarena files', () => {
  it('scenarios import of a scenario whose slug is a built-in scenario with other content refuses, naming both and the flags, and stores nothing (not the file\'s new character either)', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const before = snapshot(db);
    const file = simarenaFile([
      { id: 'nadia-haddad', firstName: 'Nadia', lastName: 'Haddad' },
      { ...builtInScenario(), context: 'Two people share a table at a wedding.', casts: [['nadia-haddad', 'sam-oduya']] },
    ]);
    const result = await cli(['scenarios', 'import', file], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${file}: record 2: scenario "mutual-friend-conference-lunch" (Finding a mutual friend over conference lunch) differs from the scenario ` +
        '"mutual-friend-conference-lunch" already in the library (Finding a mutual friend over conference lunch, source simarena): ' +
        'import it under a fresh slug with --rename, or replace the existing one with --replace; nothing was imported',
    );
    expect(snapshot(db)).toEqual(before);
    expect(one(db, "SELECT count(*) FROM characters WHERE id = 'nadia-haddad'")).toBe(0);
  });

  it('scenarios import of the built-in library files into a database that holds them says all are unchanged and writes nothing', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const before = snapshot(db);
    const files = ['characters', 'cooperative', 'competitive', 'mixed'].map((f) => join(library, `${f}.json`));
    const result = await cli(['scenarios', 'import', ...files], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const [imported, unchanged, ...rest] = result.stdout.split('\n');
    const scenarioCount = one(db, 'SELECT count(*) FROM scenarios') as number;
    expect(imported).toMatch(new RegExp(`^Imported ${scenarioCount} scenario\\(s\\) and \\d+ character\\(s\\)\\.$`));
    expect(unchanged).toMatch(/^Unchanged, already in the library with the same content: scenario\(s\) .+ and \d+ more; character\(s\) .+\.$/);
    expect(rest).toEqual([]);
    expect(snapshot(db)).toEqual(before);
  });

  it('scenarios import of an equal scenario with one more cast is unchanged and only adds the cast', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const scenario = builtInScenario();
    const extra: [string, string] = ['sam-oduya', 'amara-okafor'];
    expect(scenario.casts).not.toContainEqual(extra);
    const result = await cli(['scenarios', 'import', simarenaFile([{ ...scenario, casts: [...scenario.casts, extra] }])], env);
    expect(result).toMatchObject({
      code: 0,
      stdout:
        'Imported 1 scenario(s) and 0 character(s).\nUnchanged, already in the library with the same content: scenario(s) mutual-friend-conference-lunch.\n' +
        'Added 1 new cast(s) to the unchanged scenario "mutual-friend-conference-lunch".',
    });
    expect(one(db, "SELECT count(*) FROM casts WHERE scenario_id = 'mutual-friend-conference-lunch'")).toBe(scenario.casts.length + 1);
    expect(one(db, "SELECT source FROM scenarios WHERE id = 'mutual-friend-conference-lunch'")).toBe('simarena');
  });

  it('scenarios import --rename stores the newcomer under slug-2, leaves the built-in one alone, and the same file again is unchanged (no slug-3)', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const original = one(db, "SELECT context FROM scenarios WHERE id = 'mutual-friend-conference-lunch'");
    const { facts: _facts, ...withoutFacts } = builtInScenario();
    const file = simarenaFile([{ ...withoutFacts, context: 'Two people share a table at a wedding.' }]);
    const renamed = await cli(['scenarios', 'import', file, '--rename'], env);
    expect(renamed).toMatchObject({
      code: 0,
      stdout: 'Imported 1 scenario(s) and 0 character(s).\nScenario "mutual-friend-conference-lunch" was taken by a different scenario: imported as "mutual-friend-conference-lunch-2".',
    });
    expect(all(db, "SELECT id, context, source FROM scenarios WHERE id LIKE 'mutual-friend-conference-lunch%' ORDER BY id")).toEqual([
      { id: 'mutual-friend-conference-lunch', context: original, source: 'simarena' },
      { id: 'mutual-friend-conference-lunch-2', context: 'Two people share a table at a wedding.', source: 'import' },
    ]);
    for (const flags of [['--rename'], []]) {
      const again = await cli(['scenarios', 'import', file, ...flags], env);
      expect(again).toMatchObject({
        code: 0,
        stdout: 'Imported 1 scenario(s) and 0 character(s).\nUnchanged, already in the library with the same content: scenario(s) mutual-friend-conference-lunch-2.',
      });
    }
    expect(one(db, "SELECT count(*) FROM scenarios WHERE id LIKE 'mutual-friend-conference-lunch%'")).toBe(2);
  });

  it('scenarios import --replace of a built-in scenario without dialogues replaces its text and drops the marked facts the new record does not carry', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const facts = one(db, "SELECT count(*) FROM scenario_facts WHERE scenario_id = 'mutual-friend-conference-lunch'") as number;
    expect(facts).toBeGreaterThan(0);
    const { facts: _facts, ...withoutFacts } = builtInScenario();
    const result = await cli(['scenarios', 'import', simarenaFile([{ ...withoutFacts, context: 'Two people share a table at a wedding.' }]), '--replace'], env);
    expect(result).toMatchObject({
      code: 0,
      stdout: `Imported 1 scenario(s) and 0 character(s).\nReplaced scenario "mutual-friend-conference-lunch" (no dialogues used it); its ${facts} marked fact(s) were dropped: the new record carries none.`,
    });
    expect(db.prepare("SELECT context, source FROM scenarios WHERE id = 'mutual-friend-conference-lunch'").get()).toEqual({
      context: 'Two people share a table at a wedding.',
      source: 'import',
    });
    expect(one(db, "SELECT count(*) FROM scenario_facts WHERE scenario_id = 'mutual-friend-conference-lunch'")).toBe(0);
    // The built-in library, loaded by every command, does not bring the old text back.
    await cli(['scenarios', 'list'], env);
    expect(one(db, "SELECT context FROM scenarios WHERE id = 'mutual-friend-conference-lunch'")).toBe('Two people share a table at a wedding.');
  });
});

describe('simarena scenarios import --replace, for a scenario with generated dialogues', () => {
  let fake: FakeLlm | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('scenarios import --replace of a scenario that generate wrote dialogues for refuses, saying how many and to use --rename, and stores nothing', async () => {
    const { db, env: dbEnv } = freshDb();
    fake = await startFakeLlm();
    const env = { ...dbEnv, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test-key', ENDPOINTS_FILE: join(tempDir(), 'none.json') };
    const generated = await cli(['generate', '--scenarios', 'mutual-friend-conference-lunch', '--modes', 'script', '--model', 'm', '--run-name', 'r'], env);
    expect(generated.stderr).toBe('');
    const dialogues = one(db, "SELECT count(*) FROM dialogues WHERE scenario_id = 'mutual-friend-conference-lunch'") as number;
    expect(dialogues).toBeGreaterThan(1);
    const before = snapshot(db);
    const file = simarenaFile([
      { id: 'nadia-haddad', firstName: 'Nadia', lastName: 'Haddad' },
      { ...builtInScenario(), goals: ['Find a friend in common.', 'Find a friend in common too.'], casts: [['nadia-haddad', 'sam-oduya']] },
    ]);
    const result = await cli(['scenarios', 'import', file, '--replace'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${file}: record 2: scenario "mutual-friend-conference-lunch" (Finding a mutual friend over conference lunch) would replace the scenario ` +
        `"mutual-friend-conference-lunch" (Finding a mutual friend over conference lunch), but ${dialogues} dialogues use it, ` +
        'and their raters would read a text the model never saw: import it under a fresh slug with --rename instead; nothing was imported',
    );
    expect(snapshot(db)).toEqual(before);
    // Without a flag, the refusal already says that --replace is not the way out.
    const plain = await cli(['scenarios', 'import', file], env);
    expect(plain.stderr).toContain(
      `(Finding a mutual friend over conference lunch, source simarena, ${dialogues} dialogues): import it under a fresh slug with --rename (it cannot be replaced: ${dialogues} dialogues were written for its text); nothing was imported`,
    );
  });
});

describe('simarena scenarios import, a Sotopia environment re-imported under the same pk', () => {
  it('scenarios import of the same profile files twice is all unchanged and makes no copies', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', ...profiles], env);
    const before = snapshot(db);
    const again = await cli(['scenarios', 'import', ...profiles], env);
    expect(again).toMatchObject({
      code: 0,
      stdout:
        'Imported 1 scenario(s) and 2 character(s).\nUnchanged, already in the library with the same content: scenario(s) lost_cat_poster; character(s) oksana-petrenko, tomasz-wojcik.',
    });
    expect(snapshot(db)).toEqual(before);
  });

  it('scenarios import of the environment with a changed text under the same pk (and another codename) refuses, naming both, and stores nothing', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', ...profiles], env);
    const before = snapshot(db);
    const file = changedEnvironment({ codename: 'lost_dog_poster' });
    const result = await cli(['scenarios', 'import', file, ...agentProfiles, newAgent()], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${file}: record 1: scenario "lost_dog_poster" (Two neighbours meet in the car park., Sotopia pk ${ENV_PK}) differs from the scenario "lost_cat_poster" ` +
        'already in the library (Two neighbours meet by the lift., source import): import it under a fresh slug with --rename, or replace the existing one with --replace; nothing was imported',
    );
    expect(snapshot(db)).toEqual(before);
  });

  it('scenarios import --replace of the changed environment replaces a scenario without dialogues; its pk still names it', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', ...profiles], env);
    const result = await cli(['scenarios', 'import', changedEnvironment(), ...agentProfiles, '--replace'], env);
    expect(result).toMatchObject({
      code: 0,
      stdout: 'Imported 1 scenario(s) and 2 character(s).\nReplaced scenario "lost_cat_poster" (no dialogues used it).\nUnchanged, already in the library with the same content: character(s) oksana-petrenko, tomasz-wojcik.',
    });
    expect(all(db, "SELECT id, context FROM scenarios WHERE source = 'import'")).toEqual([{ id: 'lost_cat_poster', context: CHANGED_TEXT }]);
    expect(one(db, 'SELECT scenario_id FROM scenario_aliases WHERE alias = ?', ENV_PK)).toBe('lost_cat_poster');
  });

  it('scenarios import of the changed environment, once an episode of it was imported: --replace refuses (nothing stored), --rename stores a copy and leaves the old one and its dialogue alone; re-imports make no copies', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', ...profiles], env);
    expect((await cli(['dialogues', 'import', join(fixtures, 'episode-log.json')], env)).code).toBe(0);
    const dialogue = db.prepare("SELECT id, scenario_id, cast_id FROM dialogues WHERE origin = 'imported'").get() as { id: number; scenario_id: string };
    expect(dialogue.scenario_id).toBe('lost_cat_poster');
    const before = snapshot(db);
    const file = changedEnvironment();

    const replace = await cli(['scenarios', 'import', file, ...agentProfiles, newAgent(), '--replace'], env);
    expect(replace.code).toBe(1);
    expect(replace.stderr).toBe(
      `error: ${file}: record 1: scenario "lost_cat_poster" (Two neighbours meet in the car park., Sotopia pk ${ENV_PK}) would replace the scenario "lost_cat_poster" ` +
        '(Two neighbours meet by the lift.), but 1 dialogue uses it, and its raters would read a text the model never saw: ' +
        'import it under a fresh slug with --rename instead; nothing was imported',
    );
    expect(snapshot(db)).toEqual(before);

    const rename = await cli(['scenarios', 'import', file, ...agentProfiles, '--rename'], env);
    expect(rename).toMatchObject({
      code: 0,
      stdout:
        'Imported 1 scenario(s) and 2 character(s).\nScenario "lost_cat_poster" was taken by a different scenario: imported as "lost_cat_poster-2".\n' +
        'Unchanged, already in the library with the same content: character(s) oksana-petrenko, tomasz-wojcik.',
    });
    expect(all(db, "SELECT id, context FROM scenarios WHERE source = 'import' ORDER BY id")).toEqual([
      { id: 'lost_cat_poster', context: ORIGINAL_TEXT },
      { id: 'lost_cat_poster-2', context: CHANGED_TEXT },
    ]);
    expect(db.prepare('SELECT id, scenario_id, cast_id FROM dialogues').all()).toEqual([dialogue]);
    expect(one(db, 'SELECT scenario_id FROM scenario_aliases WHERE alias = ?', ENV_PK)).toBe('lost_cat_poster-2');

    // The changed file again: its pk now names the copy, which holds its text.
    const changedAgain = await cli(['scenarios', 'import', file, ...agentProfiles], env);
    expect(changedAgain.stdout.split('\n')[1]).toBe('Unchanged, already in the library with the same content: scenario(s) lost_cat_poster-2; character(s) oksana-petrenko, tomasz-wojcik.');
    // The original file again: its text is still under its own slug, which its pk names again (episodes of that file
    // are of that text).
    const originalAgain = await cli(['scenarios', 'import', ...profiles, '--rename'], env);
    expect(originalAgain.stdout.split('\n')[1]).toBe('Unchanged, already in the library with the same content: scenario(s) lost_cat_poster; character(s) oksana-petrenko, tomasz-wojcik.');
    expect(one(db, "SELECT count(*) FROM scenarios WHERE source = 'import'")).toBe(2);
    expect(one(db, 'SELECT scenario_id FROM scenario_aliases WHERE alias = ?', ENV_PK)).toBe('lost_cat_poster');
  });
});
