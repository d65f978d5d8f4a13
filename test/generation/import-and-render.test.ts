import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dialogueToJsonl } from '../../src/generation/dialogue-jsonl.js';
import { insertDialogue, listTurns, replaceTurns } from '../../src/generation/dialogue.queries.js';
import { normalizeTurnText, parseAgentTurn, parseScript } from '../../src/generation/model-output.schema.js';
import { renderTurnsForRater } from '../../src/generation/render-turns.js';
import { insertSimpleRun, markInterruptedRuns } from '../../src/generation/run.queries.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';
import { installTestLibrary } from './generation-fixtures.js';

const now = new Date('2026-03-01T12:00:00.000Z');

const episode = {
  pk: '01H-EPISODE',
  environment: '01H-ENV',
  agents: ['01H-A', '01H-B'],
  tag: 'gpt-3.5-turbo_gpt-3.5-turbo',
  models: ['gpt-4', 'gpt-3.5-turbo', 'gpt-3.5-turbo'],
  messages: [
    [
      ['Environment', 'Ana Silva', 'Here is the context of this interaction:\nScenario: Two people meet at a cafe on a rainy afternoon.\nParticipants: Ana Silva and Ben Okoro'],
      ['Environment', 'Ben Okoro', 'Here is the context of this interaction:\nScenario: Two people meet at a cafe on a rainy afternoon.\nParticipants: Ana Silva and Ben Okoro'],
    ],
    [['Ana Silva', 'Environment', 'said: "Hi Ben, got a minute?"'], ['Ben Okoro', 'Environment', 'did nothing']],
    [['Ana Silva', 'Environment', 'did nothing'], ['Ben Okoro', 'Environment', '[non-verbal communication] waves']],
    [['Ana Silva', 'Environment', 'did nothing'], ['Ben Okoro', 'Environment', 'did nothing']],
    [['Ana Silva', 'Environment', '[action] pays the bill'], ['Ben Okoro', 'Environment', 'did nothing']],
    [['Ana Silva', 'Environment', 'did nothing'], ['Ben Okoro', 'Environment', 'left the conversation']],
  ],
  rewards: [],
};

describe('simarena dialogues import', () => {
  it('dialogues import of a Sotopia EpisodeLog with --mode, finds the scenario by its text and stores the turns in our vocabulary', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['friend']);
    const file = join(tempDir(), 'episodes.json');
    writeFileSync(file, JSON.stringify([episode]));
    const result = await cli(['dialogues', 'import', file, '--mode', 'agents', '--run-name', 'sotopia'], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 1 dialogue(s) into run sotopia (id 1).' });
    const d = db.prepare('SELECT id, scenario_id, mode, model, origin, state, end_reason, meta FROM dialogues').get() as Record<string, string | number>;
    expect(d).toMatchObject({ scenario_id: 'loan-friend', mode: 'AGENTS', model: 'gpt-3.5-turbo', origin: 'imported', state: 'complete', end_reason: 'left' });
    expect(JSON.parse(String(d.meta))).toMatchObject({ source: 'sotopia', episode_pk: '01H-EPISODE' });
    expect(listTurns(db, Number(d.id)).map((t) => [t.speaker, t.action, t.text])).toEqual([
      [1, 'speak', 'Hi Ben, got a minute?'],
      [2, 'non-verbal', 'waves'],
      [1, 'none', ''],
      [1, 'action', 'pays the bill'],
      [2, 'leave', ''],
    ]);
  });

  it('dialogues import of a Sotopia EpisodeLog, when its two characters exist but are not a cast of the scenario, adds the cast and imports', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['friend']);
    // The library's cast is Ana (character 1) with Ben; this published episode has Ben start, so Ben has goal 1.
    const swapped = {
      ...episode,
      messages: episode.messages.map((step) =>
        step.map(([from, to, text]) => [from === 'Ana Silva' ? 'Ben Okoro' : from === 'Ben Okoro' ? 'Ana Silva' : from, to === 'Ana Silva' ? 'Ben Okoro' : to === 'Ben Okoro' ? 'Ana Silva' : to, text]),
      ),
    };
    const file = join(tempDir(), 'episodes.json');
    writeFileSync(file, JSON.stringify([swapped]));
    const result = await cli(['dialogues', 'import', file, '--mode', 'agents', '--run-name', 'published'], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 0, stdout: 'Imported 1 dialogue(s) into run published (id 1).' });
    const casts = db.prepare('SELECT id, character_1_id, character_2_id, position FROM casts ORDER BY position').all() as { id: number; character_1_id: string; character_2_id: string; position: number }[];
    expect(casts.map((c) => [c.character_1_id, c.character_2_id, c.position])).toEqual([
      ['ana-silva', 'ben-okoro', 0],
      ['ben-okoro', 'ana-silva', 1],
    ]);
    const d = db.prepare('SELECT id, cast_id FROM dialogues').get() as { id: number; cast_id: number };
    expect(d.cast_id).toBe(casts[1]?.id);
    expect(listTurns(db, d.id).map((t) => [t.speaker, t.action, t.text]).slice(0, 2)).toEqual([
      [1, 'speak', 'Hi Ben, got a minute?'],
      [2, 'non-verbal', 'waves'],
    ]);
  });

  it('dialogues import of a Sotopia EpisodeLog, when a character is not in the library, exits 1 saying what to import first and stores nothing', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['friend']);
    const stranger = { ...episode, messages: episode.messages.map((step) => step.map(([from, to, text]) => [from === 'Ben Okoro' ? 'Carla Diaz' : from, to === 'Ben Okoro' ? 'Carla Diaz' : to, text])) };
    const file = join(tempDir(), 'episodes.json');
    writeFileSync(file, JSON.stringify([episode, stranger]));
    const result = await cli(['dialogues', 'import', file, '--mode', 'agents'], { DATABASE_PATH: path });
    expect(result).toMatchObject({
      code: 1,
      stderr: `error: ${file}: record 2: character "Carla Diaz" is not in the library: import the Sotopia EnvironmentProfile and AgentProfile files first (simarena scenarios import ENVIRONMENTS.json AGENTS.json)`,
    });
    expect(db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM dialogues').pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM casts').pluck().get()).toBe(1);
  });

  it('dialogues import of simarena JSONL, when a later record fails after an earlier one needed a new cast, adds no cast until the file is clean', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['friend']);
    const record = { scenario_id: 'loan-friend', cast: ['ben-okoro', 'ana-silva'], mode: 'agents', model: 'm', turns: [{ speaker: 1, action: 'speak', text: 'Hi.' }] };
    const file = join(tempDir(), 'dialogues.jsonl');
    writeFileSync(file, `${JSON.stringify(record)}\n${JSON.stringify({ ...record, scenario_id: 'no-such-scenario' })}\n`);
    const result = await cli(['dialogues', 'import', file], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 1, stderr: `error: ${file}: record 2: unknown scenario "no-such-scenario": import it first (simarena scenarios import)` });
    expect(db.prepare('SELECT count(*) FROM casts').pluck().get()).toBe(1);
    writeFileSync(file, `${JSON.stringify(record)}\n`);
    expect((await cli(['dialogues', 'import', file], { DATABASE_PATH: path })).code).toBe(0);
    expect(db.prepare('SELECT character_1_id, character_2_id FROM casts ORDER BY position').all()).toEqual([
      { character_1_id: 'ana-silva', character_2_id: 'ben-okoro' },
      { character_1_id: 'ben-okoro', character_2_id: 'ana-silva' },
    ]);
  });

  it('dialogues import of the file `export --format dialogues` wrote, imports every dialogue with its turns, mode, model and sample', async () => {
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [[], []] });
    const file = join(tempDir(), 'dialogues.jsonl');
    const exported = await cli(['export', '--batch', String(made.batchId), '--format', 'dialogues', '--out', file], { DATABASE_PATH: path });
    expect(exported.code).toBe(0);
    const result = await cli(['dialogues', 'import', file, '--run-name', 'round-trip'], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: 'Imported 4 dialogue(s) into run round-trip (id 2).' });
    const shape = (runId: number) =>
      (db.prepare('SELECT id, scenario_id, cast_id, sample_index, mode, model FROM dialogues WHERE run_id = ? ORDER BY id').all(runId) as { id: number }[]).map(
        ({ id, ...rest }) => ({ ...rest, turns: listTurns(db, id).map((t) => [t.speaker, t.action, t.text]) }),
      );
    expect(shape(2)).toEqual(shape(made.runId));
    const meta = db.prepare('SELECT meta FROM dialogues WHERE run_id = 2 ORDER BY id').pluck().all() as string[];
    expect(JSON.parse(meta[0] ?? '{}')).toMatchObject({ source: 'simarena', source_run: expect.any(String), source_id: expect.any(Number) });
  });

  it('dialogues import of the file `export --format sotopia` wrote, imports every episode with its turns, mode and model', async () => {
    const { db, path } = createTestDb();
    const made = makeBatchWithJudgments(db, { votes: [[], []] });
    const file = join(tempDir(), 'episodes.json');
    expect((await cli(['export', '--batch', String(made.batchId), '--format', 'sotopia', '--out', file], { DATABASE_PATH: path })).code).toBe(0);
    const result = await cli(['dialogues', 'import', file, '--run-name', 'from-sotopia'], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: 'Imported 4 dialogue(s) into run from-sotopia (id 2).' });
    const shape = (runId: number) =>
      (db.prepare('SELECT id, scenario_id, cast_id, mode, model FROM dialogues WHERE run_id = ? ORDER BY id').all(runId) as { id: number }[]).map(
        ({ id, ...rest }) => ({ ...rest, turns: listTurns(db, id).map((t) => [t.speaker, t.action, t.text]) }),
      );
    expect(shape(2)).toEqual(shape(made.runId));
  });

  it('dialogues import, without a mode for a record, exits 1 naming the file and record and stores nothing', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['friend']);
    const file = join(tempDir(), 'episodes.json');
    writeFileSync(file, JSON.stringify([{ ...episode, mode: 'script' }, episode]));
    const result = await cli(['dialogues', 'import', file], { DATABASE_PATH: path });
    expect(result).toMatchObject({ code: 1, stderr: `error: ${file}: record 2: no mode: the tag "gpt-3.5-turbo_gpt-3.5-turbo" names none; give --mode (script, agents, mindreaders, humans, human_agent, human_script) or a "mode" field` });
    expect(db.prepare('SELECT count(*) FROM runs').pluck().get()).toBe(0);
  });

  it('dialogues import of simarena JSONL (the export shape) round-trips turns, mode and model per record', async () => {
    const { db, path } = createTestDb();
    installTestLibrary(db, ['stranger']);
    const castId = db.prepare('SELECT id FROM casts').pluck().get() as number;
    const runId = insertSimpleRun(db, { name: 'src', kind: 'generation', state: 'complete', model: 'gpt-4o-mini', modes: ['SCRIPT'] }, now);
    const id = insertDialogue(db, { runId, scenarioId: 'loan-stranger', castId, sampleIndex: 3, mode: 'SCRIPT', model: 'gpt-4o-mini', origin: 'generated', state: 'complete' }, now);
    replaceTurns(db, id, [
      { speaker: 1, action: 'speak', text: 'Hello.' },
      { speaker: 2, action: 'leave', text: '' },
    ]);
    const record = dialogueToJsonl(db, id);
    const file = join(tempDir(), 'dialogues.jsonl');
    writeFileSync(file, `${JSON.stringify(record)}\n${JSON.stringify({ ...record, id: 99, mode: 'agents', model: 'other' })}\n`);
    const result = await cli(['dialogues', 'import', file, '--run-name', 'again'], { DATABASE_PATH: path });
    expect(result.stdout).toBe('Imported 2 dialogue(s) into run again (id 2).');
    const rows = db.prepare("SELECT id, mode, model, sample_index FROM dialogues WHERE run_id = 2 ORDER BY id").all() as { id: number; mode: string; model: string; sample_index: number }[];
    expect(rows.map((r) => [r.mode, r.model, r.sample_index])).toEqual([
      ['SCRIPT', 'gpt-4o-mini', 3],
      ['AGENTS', 'other', 3],
    ]);
    expect(listTurns(db, rows[1]?.id ?? 0).map((t) => [t.speaker, t.action, t.text])).toEqual([
      [1, 'speak', 'Hello.'],
      [2, 'leave', ''],
    ]);
    const listed = JSON.parse((await cli(['dialogues', 'list', '--run', 'again', '--json'], { DATABASE_PATH: path })).stdout) as { id: number; mode: string; turns: number }[];
    expect(listed.map((d) => [d.id, d.mode, d.turns])).toEqual(rows.map((r) => [r.id, r.mode, 2]));
    const shown = await cli(['dialogues', 'show', String(rows[1]?.id)], { DATABASE_PATH: path });
    expect(shown.stdout.split('\n').slice(1)).toEqual(['Ana Silva: Hello.', 'Ben Okoro: [leaves the conversation]']);
  });
});

describe('renderTurnsForRater', () => {
  it('renderTurnsForRater, for the same content written by SCRIPT and by AGENTS, renders identically and drops none turns', () => {
    const names: [string, string] = ['Ana Silva', 'Ben Okoro'];
    const script = parseScript(
      JSON.stringify({
        turns: [
          { speaker: 'Ana Silva', action: 'speak', text: '"Hi there."' },
          { speaker: 'Ben Okoro', action: 'non-verbal', text: 'nods  slowly' },
          { speaker: 'Ana Silva', action: 'action', text: 'Ana Silva: pours tea' },
          { speaker: 'Ben Okoro', action: 'leave', text: 'Bye!' },
        ],
      }),
      names,
      20,
    );
    const agents = [
      parseAgentTurn('{"action":"speak","text":"Ana Silva: Hi there."}', 1, 'Ana Silva'),
      parseAgentTurn('{"action":"none","text":""}', 2, 'Ben Okoro'),
      parseAgentTurn('{"action":"non-verbal","text":"nods slowly"}', 2, 'Ben Okoro'),
      parseAgentTurn('{"action":"action","text":"pours tea"}', 1, 'Ana Silva'),
      parseAgentTurn('{"action":"leave","text":""}', 2, 'Ben Okoro'),
    ];
    if (!script.ok || agents.some((a) => !a.ok)) throw new Error('fixture did not parse');
    const agentTurns = agents.flatMap((a) => (a.ok ? [a.value] : []));
    const fromScript = renderTurnsForRater(script.value.turns, names);
    const fromAgents = renderTurnsForRater(agentTurns, names);
    expect(fromScript).toEqual(fromAgents);
    expect(fromAgents.map((t) => `${t.name}: ${t.display}`)).toEqual([
      'Ana Silva: Hi there.',
      'Ben Okoro: [non-verbal] nods slowly',
      'Ana Silva: [action] pours tea',
      'Ben Okoro: [leaves the conversation]',
    ]);
  });

  it('normalizeTurnText keeps inner quotation marks and text that merely starts like a name', () => {
    expect(normalizeTurnText('speak', '"He said "no" twice"', ['Ana'])).toBe('"He said "no" twice"');
    expect(normalizeTurnText('speak', 'Anastasia is late.', ['Ana'])).toBe('Anastasia is late.');
  });

  it('parseAgentTurn, for an action outside the vocabulary or a speak turn without text, reports why', () => {
    expect(parseAgentTurn('{"action":"shout","text":"hey"}', 1, 'A')).toMatchObject({ ok: false, error: expect.stringContaining('action') });
    expect(parseAgentTurn('{"action":"speak","text":"  "}', 1, 'A')).toEqual({ ok: false, error: 'a "speak" turn needs text' });
    expect(parseAgentTurn('```json\n{"action":"speak","text":"ok"}\n```', 1, 'A')).toEqual({ ok: true, value: { speaker: 1, action: 'speak', text: 'ok' } });
  });
});

describe('markInterruptedRuns', () => {
  it('markInterruptedRuns, for a run left running by a dead process, marks it interrupted and its running dialogues pending', () => {
    const { db } = createTestDb();
    installTestLibrary(db);
    const castId = db.prepare('SELECT id FROM casts').pluck().get() as number;
    const runId = insertSimpleRun(db, { name: 'r', kind: 'generation', state: 'running', model: 'm', modes: ['AGENTS'] }, now);
    // A pid that cannot be alive: above Linux's pid_max.
    db.prepare('UPDATE runs SET worker_pid = 99999999 WHERE id = ?').run(runId);
    insertDialogue(db, { runId, scenarioId: 'loan-stranger', castId, sampleIndex: 0, mode: 'AGENTS', model: 'm', origin: 'generated', state: 'running' }, now);
    const live = insertSimpleRun(db, { name: 'live', kind: 'generation', state: 'running', model: 'm', modes: ['AGENTS'] }, now);
    db.prepare('UPDATE runs SET worker_pid = ? WHERE id = ?').run(process.ppid, live);
    // A live pid whose heartbeat stopped an hour ago belongs to another process now.
    const silent = insertSimpleRun(db, { name: 'silent', kind: 'generation', state: 'running', model: 'm', modes: ['AGENTS'] }, now);
    db.prepare("UPDATE runs SET worker_pid = ?, heartbeat_at = '2026-03-01T11:00:00.000Z' WHERE id = ?").run(process.ppid, silent);
    const mine = insertSimpleRun(db, { name: 'mine', kind: 'generation', state: 'running', model: 'm', modes: ['AGENTS'] }, now);
    db.prepare('UPDATE runs SET worker_pid = ? WHERE id = ?').run(process.pid, mine);
    expect(markInterruptedRuns(db, now)).toEqual([runId, silent]);
    expect(db.prepare('SELECT name, state FROM runs ORDER BY id').all()).toEqual([
      { name: 'r', state: 'interrupted' },
      { name: 'live', state: 'running' },
      { name: 'silent', state: 'interrupted' },
      { name: 'mine', state: 'running' },
    ]);
    expect(db.prepare('SELECT state FROM dialogues').pluck().all()).toEqual(['pending']);
    // At server start, a run marked with this very pid was left by an earlier process that had it.
    expect(markInterruptedRuns(db, now, { atStart: true })).toEqual([mine]);
  });
});
