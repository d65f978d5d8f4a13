import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dialogueToJsonl } from '../../src/generation/dialogue-jsonl.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { installTestLibrary } from './generation-fixtures.js';

// The human modes (issues 52, 53): HUMANS and HUMAN_SCRIPT conversations collected elsewhere import with the model
// `human`; a HUMAN_AGENT one names the agent's model and the character the person played. They are dialogues like any
// other: they enter a rating batch's comparisons and the Sotopia export shows what each writer saw.

const turns = [
  { speaker: 1, action: 'speak', text: 'Could you lend me 500 euros until Friday?' },
  { speaker: 2, action: 'speak', text: 'Friday? What happened?' },
  { speaker: 1, action: 'speak', text: 'The bistro had a slow month.' },
  { speaker: 2, action: 'leave', text: '' },
];
const record = (extra: Record<string, unknown>) => ({ scenario_id: 'loan-friend', cast: ['ana-silva', 'ben-okoro'], turns, ...extra });

function writeJsonl(records: unknown[]): string {
  const file = join(tempDir(), 'people.jsonl');
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n'));
  return file;
}

function setUp() {
  const { db, path } = createTestDb();
  installTestLibrary(db, ['friend']);
  return { db, env: { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' } };
}

describe('simarena dialogues import of conversations of people', () => {
  it('dialogues import --mode humans, of records without a model, stores HUMANS dialogues of the model human', async () => {
    const { db, env } = setUp();
    const file = writeJsonl([record({}), record({ mode: 'human_script', sample_index: 0 })]);
    const result = await cli(['dialogues', 'import', file, '--mode', 'humans', '--run-name', 'people'], env);
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 2 dialogue(s) into run people (id 1).' });
    expect(db.prepare('SELECT mode, model, origin, state FROM dialogues ORDER BY id').all()).toEqual([
      { mode: 'HUMANS', model: 'human', origin: 'imported', state: 'complete' },
      { mode: 'HUMAN_SCRIPT', model: 'human', origin: 'imported', state: 'complete' },
    ]);
  });

  it('dialogues import of a HUMANS record that names a model, exits 1 saying people wrote it, and stores nothing', async () => {
    const { db, env } = setUp();
    const file = writeJsonl([record({ mode: 'HUMANS', model: 'gpt-4o' })]);
    const result = await cli(['dialogues', 'import', file], env);
    expect(result).toMatchObject({ code: 1, stderr: `error: ${file}: record 1: a HUMANS dialogue has the model "human" (people wrote it), not "gpt-4o"` });
    expect(db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(0);
  });

  it('dialogues import --mode human_agent, without the character the person played, exits 1 naming the option; with it, keeps it through an export and back', async () => {
    const { db, env } = setUp();
    const file = writeJsonl([record({ model: 'gpt-4o-mini' })]);
    const refused = await cli(['dialogues', 'import', file, '--mode', 'human_agent'], env);
    expect(refused).toMatchObject({ code: 1, stderr: `error: ${file}: record 1: a HUMAN_AGENT dialogue needs the character the person played: give --human-character 1|2 or a "human_character" field` });
    const bad = await cli(['dialogues', 'import', file, '--mode', 'human_agent', '--human-character', '3'], env);
    expect(bad).toMatchObject({ code: 1, stderr: 'error: --human-character must be 1 or 2, not "3"' });
    expect((await cli(['dialogues', 'import', file, '--mode', 'human_agent', '--human-character', '2', '--run-name', 'mixed'], env)).code).toBe(0);
    const stored = db.prepare('SELECT mode, model, meta FROM dialogues').get() as { mode: string; model: string; meta: string };
    expect(stored).toMatchObject({ mode: 'HUMAN_AGENT', model: 'gpt-4o-mini' });
    expect(JSON.parse(stored.meta)).toMatchObject({ human_character: 2 });
    const exported = dialogueToJsonl(db, 1);
    expect(exported).toMatchObject({ mode: 'HUMAN_AGENT', model: 'gpt-4o-mini', human_character: 2 });
    expect((await cli(['dialogues', 'import', writeJsonl([exported]), '--run-name', 'again'], env)).code).toBe(0);
    expect(JSON.parse(db.prepare('SELECT meta FROM dialogues WHERE id = 2').pluck().get() as string)).toMatchObject({ human_character: 2, source_id: 1 });
  });

  it('generate --modes humans exits 1 saying people play that mode, and stores no run', async () => {
    const { db, env } = setUp();
    const result = await cli(['generate', '--scenarios', 'all', '--modes', 'humans,agents', '--model', 'm', '--dry-run'], { ...env, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'unused' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HUMANS dialogues are played or written by people, not generated');
    expect(db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(0);
  });

  it('batches create --from a file comparing HUMANS:human with AGENTS:m, over imported dialogues, forms a pair per scenario sample; the Sotopia export shows each writer what it saw', async () => {
    const { db, env } = setUp();
    const people = writeJsonl([record({ mode: 'humans' }), record({ mode: 'human_script' })]);
    const agents = writeJsonl([record({ mode: 'agents', model: 'm' })]);
    expect((await cli(['dialogues', 'import', people, '--run-name', 'people'], env)).code).toBe(0);
    expect((await cli(['dialogues', 'import', agents, '--run-name', 'agents'], env)).code).toBe(0);
    const file = join(tempDir(), 'batch.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'real-life',
        runs: ['people', 'agents'],
        comparisons: [['HUMANS:human', 'AGENTS:m'], ['HUMAN_SCRIPT:human', 'HUMANS:human']],
        provider: { kind: 'link' },
        consent: 'You agree to take part.',
        instructions: 'Choose the more natural conversation.',
      }),
    );
    const created = await cli(['batches', 'create', '--from', file], env);
    expect(created.code).toBe(0);
    const pairs = db
      .prepare('SELECT c.condition_a, c.condition_b, da.mode AS mode_a, db.mode AS mode_b FROM pairs p JOIN comparisons c ON c.id = p.comparison_id JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id ORDER BY p.id')
      .all();
    expect(pairs).toEqual([
      { condition_a: 'HUMANS:human', condition_b: 'AGENTS:m', mode_a: 'HUMANS', mode_b: 'AGENTS' },
      { condition_a: 'HUMAN_SCRIPT:human', condition_b: 'HUMANS:human', mode_a: 'HUMAN_SCRIPT', mode_b: 'HUMANS' },
    ]);

    const out = join(tempDir(), 'episodes.json');
    expect((await cli(['export', '--batch', 'real-life', '--format', 'sotopia', '--out', out], env)).code).toBe(0);
    const episodes = (JSON.parse(readFileSync(out, 'utf8')) as { episodes: { mode?: string; simarena?: { mode: string }; messages: string[][][] }[] }).episodes;
    const opening = (mode: string) => {
      const episode = episodes.find((e) => (e.mode ?? e.simarena?.mode) === mode);
      return episode?.messages[0]?.[0]?.[2] ?? '';
    };
    // A person of HUMANS saw their own goal and "Unknown" for the partner's, as an AGENTS call does; HUMAN_SCRIPT's
    // writer saw both goals and both secrets, as SCRIPT's call does.
    expect(opening('HUMANS')).toContain("Ben Okoro's goal: Unknown");
    expect(opening('HUMANS')).not.toContain('SECRET-BEN');
    expect(opening('HUMAN_SCRIPT')).toContain('GOAL-BEN');
    expect(opening('HUMAN_SCRIPT')).toContain('SECRET-BEN');
  });
});
