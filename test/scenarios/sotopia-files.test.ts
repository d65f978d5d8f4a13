// Issue 11, point 2: real Sotopia files come in intact. The files under test/fixtures/sotopia/ are written from
// Sotopia's pydantic models (see its README.md).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const fixtures = new URL('../fixtures/sotopia/', import.meta.url).pathname;
const profiles = readdirSync(join(fixtures, 'profiles')).map((f) => join(fixtures, 'profiles', f));

function freshDb() {
  const { db, path } = createTestDb();
  return { db, env: { DATABASE_PATH: path } };
}
const count = (db: ReturnType<typeof freshDb>['db'], sql: string, ...params: unknown[]) => db.prepare(sql).pluck().get(...params) as number;
const nonBuiltIn = "SELECT count(*) FROM scenarios WHERE source <> 'simarena'";

describe('simarena scenarios import, Sotopia profile files', () => {
  it("scenarios import of one profile per file (<pk>.json), where the environment has no relationship, imports it as strangers and keeps each pk as an alias", async () => {
    const { db, env } = freshDb();
    const result = await cli(['scenarios', 'import', ...profiles], env);
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 1 scenario(s) and 2 character(s).' });
    expect(db.prepare('SELECT id, relationship FROM scenarios WHERE id = ?').get('lost_cat_poster')).toEqual({ id: 'lost_cat_poster', relationship: 'stranger' });
    expect(db.prepare('SELECT alias, character_id FROM character_aliases ORDER BY alias').all()).toEqual([
      { alias: '01H5TNE5P90FYSTBVCECTTQR9B', character_id: 'oksana-petrenko' },
      { alias: '01H5TNE5PAZABGW79HJ07TACCZ', character_id: 'tomasz-wojcik' },
    ]);
    expect(db.prepare('SELECT scenario_id FROM scenario_aliases WHERE alias = ?').pluck().get('01H7VFHN5WVC5HKKVBHZBA553R')).toBe('lost_cat_poster');
    expect(db.prepare("SELECT moral_values, big_five FROM characters WHERE id = 'oksana-petrenko'").get()).toEqual({ moral_values: '[]', big_five: '' });
  });

  it('scenarios import of a Redis dump (values as JSON text) imports every profile, naming an environment without codename by its pk', async () => {
    const { db, env } = freshDb();
    const result = await cli(['scenarios', 'import', join(fixtures, 'redis-dump.json')], env);
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 1 scenario(s) and 2 character(s).' });
    expect(db.prepare("SELECT id, relationship FROM scenarios WHERE source = 'import'").get()).toEqual({ id: '01h7vfhpdzvvcdzr3aara547cy', relationship: 'acquaintance' });
    // Sotopia's age 0 means "not given".
    expect(db.prepare("SELECT age FROM characters WHERE id = 'kofi-boateng'").pluck().get()).toBeNull();
    expect(count(db, 'SELECT count(*) FROM character_aliases')).toBe(2);
  });

  it('scenarios import of an environment file after its agents were imported on their own casts it from the agents found by pk', async () => {
    const { db, env } = freshDb();
    expect((await cli(['scenarios', 'import', join(fixtures, 'agents.json')], env)).code).toBe(0);
    const environments = JSON.parse(readFileSync(join(fixtures, 'environments.json'), 'utf8')) as { codename: string }[];
    const file = join(tempDir(), 'envs.json');
    writeFileSync(file, JSON.stringify(environments.filter((e) => e.codename === 'borrow_money')));
    const result = await cli(['scenarios', 'import', file], env);
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 1 scenario(s) and 0 character(s).' });
    const cast = db.prepare("SELECT character_1_id, character_2_id FROM casts WHERE scenario_id = 'borrow_money'").get() as { character_1_id: string; character_2_id: string };
    expect(['ana-silva', 'ben-okoro']).toContain(cast.character_1_id);
    expect(cast.character_2_id).toBe('chen-li');
  });

  it('scenarios import of a JSON object in no Sotopia shape exits 1 with one line naming the file and the shapes it reads, and stores nothing', async () => {
    const { db, env } = freshDb();
    const bad = join(tempDir(), 'odd.json');
    writeFileSync(bad, JSON.stringify({ hello: 'world' }));
    const result = await cli(['scenarios', 'import', bad, ...profiles], env);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^error: ${bad}: expected a JSON array of Sotopia profiles .*one profile \\(Sotopia's <pk>\\.json\\).*Redis dump`));
    expect(count(db, nonBuiltIn)).toBe(0);
  });
});

describe('simarena scenarios import, character collisions', () => {
  const changedAna = () => {
    const file = join(tempDir(), 'ana-again.json');
    writeFileSync(
      file,
      JSON.stringify([{ first_name: 'Ana', last_name: 'Silva', age: 60, occupation: 'Judge', secret: 'Another person entirely.' }, { first_name: 'Zoe', last_name: 'Park' }]),
    );
    return file;
  };

  it('scenarios import of a character whose slug exists with other content refuses, naming both and the flags, and stores nothing', async () => {
    const { db, env } = freshDb();
    expect((await cli(['scenarios', 'import', join(fixtures, 'environments.json'), join(fixtures, 'agents.json')], env)).code).toBe(0);
    const file = changedAna();
    const result = await cli(['scenarios', 'import', file], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${file}: record 1: character "ana-silva" (Ana Silva) differs from the character "ana-silva" already in the library (Ana Silva, source import, cast in craigslist-bike-sale): import it under a fresh slug with --rename, or replace the existing one with --replace; nothing was imported`,
    );
    expect(db.prepare("SELECT occupation FROM characters WHERE id = 'ana-silva'").pluck().get()).toBe('Chef');
    expect(count(db, "SELECT count(*) FROM characters WHERE id = 'zoe-park'")).toBe(0);
  });

  it('scenarios import --rename gives the newcomer a fresh slug and leaves the existing character and its casts alone', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', join(fixtures, 'environments.json'), join(fixtures, 'agents.json')], env);
    const result = await cli(['scenarios', 'import', changedAna(), '--rename'], env);
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 0 scenario(s) and 2 character(s).\nCharacter "ana-silva" was taken by a different character: imported as "ana-silva-2".' });
    expect(db.prepare("SELECT id, occupation FROM characters WHERE id LIKE 'ana-silva%' ORDER BY id").all()).toEqual([
      { id: 'ana-silva', occupation: 'Chef' },
      { id: 'ana-silva-2', occupation: 'Judge' },
    ]);
  });

  it('scenarios import --replace replaces the character and names the scenarios whose casts it plays in', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', join(fixtures, 'environments.json'), join(fixtures, 'agents.json')], env);
    const result = await cli(['scenarios', 'import', changedAna(), '--replace'], env);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[1]).toBe('Replaced character "ana-silva"; scenarios affected: craigslist-bike-sale.');
    expect(db.prepare("SELECT occupation FROM characters WHERE id = 'ana-silva'").pluck().get()).toBe('Judge');
  });

  it('scenarios import of the same profiles twice changes nothing and refuses nothing', async () => {
    const { db, env } = freshDb();
    await cli(['scenarios', 'import', ...profiles], env);
    const again = await cli(['scenarios', 'import', ...profiles], env);
    expect(again).toMatchObject({
      code: 0,
      stdout:
        'Imported 1 scenario(s) and 2 character(s).\nUnchanged, already in the library with the same content: scenario(s) lost_cat_poster; character(s) oksana-petrenko, tomasz-wojcik.',
    });
    expect(count(db, "SELECT count(*) FROM characters WHERE source = 'import'")).toBe(2);
  });

  it('scenarios import of a simarena character with a built-in slug refuses to overwrite the built-in character', async () => {
    const { db, env } = freshDb();
    await cli(['migrate'], env);
    const file = join(tempDir(), 'mine.json');
    writeFileSync(file, JSON.stringify([{ id: 'amara-okafor', firstName: 'Amara', lastName: 'Someone Else' }]));
    const result = await cli(['scenarios', 'import', file], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('character "amara-okafor" (Amara Someone Else) differs from the character "amara-okafor" already in the library (Amara Okafor, source simarena');
    expect(db.prepare("SELECT last_name FROM characters WHERE id = 'amara-okafor'").pluck().get()).toBe('Okafor');
  });

  it('scenarios import of a cast of two characters with the same display name refuses it, naming the scenario and the fix', async () => {
    const { db, env } = freshDb();
    const file = join(tempDir(), 'twins.json');
    writeFileSync(
      file,
      JSON.stringify([
        { id: 'agent-a', firstName: 'AI', lastName: 'Agent' },
        { id: 'agent-b', firstName: 'AI', lastName: 'Agent' },
        { id: 'chat', title: 'Chat', category: 'mixed', context: 'Two agents talk.', relationship: 'stranger', goals: ['g1', 'g2'], casts: [['agent-a', 'agent-b']] },
      ]),
    );
    const result = await cli(['scenarios', 'import', file], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `error: ${file}: record 3: scenario "chat": cast ["agent-a", "agent-b"] pairs two characters named "AI Agent"; give one of them another name (a SCRIPT tells its speakers apart by name); nothing was imported`,
    );
    expect(count(db, "SELECT count(*) FROM characters WHERE id LIKE 'agent-%'")).toBe(0);
  });
});

describe('simarena dialogues import, Sotopia episodes', () => {
  async function withProfiles() {
    const t = freshDb();
    expect((await cli(['scenarios', 'import', ...profiles], t.env)).code).toBe(0);
    return t;
  }
  const showJson = async (env: Record<string, string>, id: number) => JSON.parse((await cli(['dialogues', 'show', String(id), '--json'], env)).stdout) as Record<string, unknown>;

  it('dialogues import of one EpisodeLog object finds scenario and agents by pk, takes SCRIPT from the tag, and keeps rewards, reasoning, models and tag; dialogues show --json gives them back', async () => {
    const { db, env } = await withProfiles();
    const result = await cli(['dialogues', 'import', join(fixtures, 'episode-log.json')], env);
    expect(result.code).toBe(0);
    const id = db.prepare("SELECT id FROM dialogues WHERE origin = 'imported'").pluck().get() as number;
    const shown = await showJson(env, id);
    expect(shown).toMatchObject({ mode: 'SCRIPT', model: 'gpt-4', scenario_id: 'lost_cat_poster', cast: ['oksana-petrenko', 'tomasz-wojcik'], state: 'complete', end_reason: 'left' });
    expect(shown.meta).toMatchObject({
      format: 'EpisodeLog',
      tag: 'gpt-4_script_v1',
      models: ['gpt-4', 'gpt-4', 'gpt-4'],
      rewards: [[7.5, { believability: 9, goal: 8, overall_score: 3.1 }], [6, { believability: 8, goal: 6, overall_score: 2.4 }]],
      reasoning: expect.stringContaining('Agent 1 comments: goal met.'),
      agent_pks: ['01H5TNE5P90FYSTBVCECTTQR9B', '01H5TNE5PAZABGW79HJ07TACCZ'],
    });
    const turns = shown.turns as { speaker: number; action: string; text: string }[];
    expect(turns.map((t) => [t.speaker, t.action])).toEqual([[1, 'speak'], [2, 'speak'], [1, 'non-verbal'], [2, 'speak'], [1, 'speak'], [2, 'action'], [1, 'leave']]);
  });

  it('dialogues import of a list of EpisodeLogs and of the same as JSONL, whose tag names no mode, needs --mode and then keeps each per-agent model', async () => {
    const { db, env } = await withProfiles();
    const refused = await cli(['dialogues', 'import', join(fixtures, 'episode-logs.json')], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: ${join(fixtures, 'episode-logs.json')}: record 1: no mode: the tag "gpt-4_gpt-3.5-turbo_v0.0.1" names none; give --mode (script, agents, mindreaders, humans, human_agent, human_script) or a "mode" field`,
    );
    expect(count(db, "SELECT count(*) FROM dialogues WHERE origin = 'imported'")).toBe(0);
    for (const file of ['episode-logs.json', 'episode-logs.jsonl']) {
      expect((await cli(['dialogues', 'import', join(fixtures, file), '--mode', 'agents'], env)).code).toBe(0);
    }
    const metas = (db.prepare("SELECT meta FROM dialogues WHERE origin = 'imported' ORDER BY id").pluck().all() as string[]).map((m) => JSON.parse(m) as { models: string[]; rewards: number[] });
    expect(metas.map((m) => m.models)).toEqual(Array(4).fill(['gpt-4', 'gpt-4', 'gpt-3.5-turbo']));
    expect(metas.map((m) => m.rewards)).toEqual([[3, 2.5], [4, 1.5], [3, 2.5], [4, 1.5]]);
    expect(db.prepare("SELECT DISTINCT mode FROM dialogues WHERE origin = 'imported'").pluck().all()).toEqual(['AGENTS']);
  });

  it('dialogues import of episodes_to_jsonl records reads them as EpisodeLogs, mode from the tag, rewards kept', async () => {
    const { db, env } = await withProfiles();
    const result = await cli(['dialogues', 'import', join(fixtures, 'episodes.jsonl')], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Imported 2 dialogue\(s\) into run /);
    const rows = db.prepare("SELECT mode, model, meta FROM dialogues WHERE origin = 'imported' ORDER BY id").all() as { mode: string; model: string; meta: string }[];
    expect(rows.map((r) => [r.mode, r.model])).toEqual([['SCRIPT', 'gpt-4'], ['SCRIPT', 'gpt-4']]);
    expect(JSON.parse(rows[0]?.meta ?? '{}')).toMatchObject({ format: 'episodes_to_jsonl', episode_pk: '01HEP0000000000000000000C0', rewards: [[7.5, { goal: 8 }], [6, { goal: 6 }]], reasoning: 'Agent 1 comments: fine.' });
  });

  it('dialogues import of episodes naming an agent pk that was never imported exits 1 with the file, the record and what to import, and stores nothing', async () => {
    const { db, env } = freshDb();
    const result = await cli(['dialogues', 'import', join(fixtures, 'episodes.jsonl')], env);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(new RegExp(`^error: ${join(fixtures, 'episodes.jsonl')}: record 1: .*import the Sotopia EnvironmentProfile and AgentProfile files first`));
    expect(count(db, 'SELECT count(*) FROM runs')).toBe(0);
  });
});
