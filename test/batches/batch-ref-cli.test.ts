import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchReady, makeBatch, makeBatchWithJudgments, makeDialogue, makeJudgment, makePair, makeRun, makeScenario } from '../helpers/factories.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, createTestDbUpgradedAt, tempDir } from '../helpers/test-db.js';
import { buildTestApp } from '../helpers/test-app.js';
import { signIn } from '../auth/session-helpers.js';
import { upsertCharacter, upsertScenario } from '../../src/scenarios/scenario.queries.js';

const auditActions = (db: ReturnType<typeof createTestDb>['db'], batchId: number) =>
  db.prepare("SELECT action FROM audit_log WHERE target_type = 'batch' AND target_id = ? ORDER BY id").pluck().all(String(batchId));

describe('simarena batches, counted as the console counts', () => {
  it('batches list, for a batch with attention-check answers, counts in JUDGMENTS the regular answers the analysis counts and the gold ones apart', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatchWithJudgments(db, { votes: [['a', 'a', 'b'], ['a', 'b', 'b']], settings: { name: 'counted' } });
    const scenario = makeScenario(db);
    const a = makeDialogue(db, { runId: batch.runId, scenario, mode: 'SCRIPT', model: 'test-model' });
    const b = makeDialogue(db, { runId: batch.runId, scenario, mode: 'AGENTS', model: 'test-model' });
    const attention = makePair(db, { batchId: batch.batchId, comparisonId: batch.comparisonIds[0] ?? null, dialogueA: a, dialogueB: b, kind: 'attention', expected: 'a' });
    for (const raterId of batch.raterIds) makeJudgment(db, { pairId: attention, raterId, winner: 'a' });
    const env = { DATABASE_PATH: path };

    const listed = JSON.parse((await cli(['batches', 'list', '--json'], env)).stdout) as { judgments: number; goldAnswers: number }[];
    expect(listed).toEqual([expect.objectContaining({ judgments: 6, goldAnswers: 3 })]);
    const table = (await cli(['batches', 'list'], env)).stdout.split('\n');
    expect(table[0]).toMatch(/^ID\s+STATE\s+PROVIDER\s+PAIRS\s+DONE\s+JUDGMENTS\s+GOLD\s+NAME$/);
    expect(table[1]).toMatch(/\s6\s+3\s+counted$/);
    const analysis = JSON.parse((await cli(['analyze', '--batch', 'counted', '--bootstrap', '0'], env)).stdout) as { n_judgments: number };
    expect(analysis.n_judgments).toBe(6);
    expect(db.prepare('SELECT count(*) FROM judgments WHERE batch_id = ?').pluck().get(batch.batchId)).toBe(9);
  });
});

describe('simarena batch references: an id or a name, the same in every command', () => {
  it('export --batch NAME, analyze --batch NAME and batches open, pause, close and link NAME, each find the batch by its name', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatchWithJudgments(db, { votes: [['a', 'b']], settings: launchReady({ name: 'pilot-round', provider: { kind: 'link' as const } }) });
    db.prepare("UPDATE batches SET state = 'draft' WHERE id = ?").run(batch.batchId);
    const env = { DATABASE_PATH: path, PUBLIC_URL: 'https://rate.example.org' };
    const out = join(tempDir(), 'j.csv');

    const exported = await cli(['export', '--batch', 'pilot-round', '--format', 'judgments-csv', '--out', out], env);
    expect(exported, exported.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining(`of batch ${batch.batchId} as judgments`) });
    expect((await cli(['analyze', '--batch', 'pilot-round', '--bootstrap', '0'], env)).code).toBe(0);
    expect(await cli(['batches', 'open', 'pilot-round'], env)).toMatchObject({ code: 0, stdout: `Batch ${batch.batchId} is open.` });
    expect(await cli(['batches', 'link', 'pilot-round'], env)).toMatchObject({ code: 0, stdout: expect.stringMatching(/^https:\/\/rate\.example\.org\/r\//) });
    expect(await cli(['batches', 'pause', 'pilot-round'], env)).toMatchObject({ code: 0, stdout: `Batch ${batch.batchId} is paused.` });
    expect(await cli(['batches', 'close', String(batch.batchId)], env)).toMatchObject({ code: 0, stdout: `Batch ${batch.batchId} is closed.` });
    expect(db.prepare('SELECT state FROM batches WHERE id = ?').pluck().get(batch.batchId)).toBe('closed');
  });

  it('every command, given a name no batch has or one two batches share, exits 1 with one line saying so (naming the ids to choose from) and changes nothing', async () => {
    // Two batches of one name can only come from before migration 046, which refuses a name already taken.
    let first = { batchId: 0 };
    let second = { batchId: 0 };
    const { db, path } = createTestDbUpgradedAt(46, (old) => {
      first = makeBatch(old, { state: 'draft', settings: { name: 'twin' } });
      second = makeBatch(old, { state: 'draft', settings: { name: 'twin' } });
    });
    const env = { DATABASE_PATH: path };
    const out = join(tempDir(), 'j.csv');
    const unknown = 'error: No batch has the id or name "nope" (see "simarena batches list").';
    const twin = `error: 2 batches are named "twin" (ids ${first.batchId}, ${second.batchId}); give the id of the one you mean.`;
    for (const [ref, message] of [['nope', unknown], ['twin', twin]] as const) {
      for (const args of [
        ['export', '--batch', ref, '--format', 'judgments-csv', '--out', out],
        ['analyze', '--batch', ref],
        ['plan', '--effect', '0.6', '--from-batch', ref],
        ['batches', 'open', ref],
        ['batches', 'pause', ref],
        ['batches', 'close', ref],
        ['batches', 'link', ref],
        ['batches', 'edit', ref, '--name', 'x'],
        ['batches', 'delete', ref],
      ]) {
        expect(await cli(args, env), args.join(' ')).toMatchObject({ code: 1, stderr: message });
      }
    }
    expect(db.prepare("SELECT count(*) FROM batches WHERE name = 'twin' AND state = 'draft'").pluck().get()).toBe(2);
  });
});

describe('simarena batches edit and delete', () => {
  it('batches edit ID --name and --from FILE.json, for a draft, change its name and settings, form its pairs again and audit; once open, refuse', async () => {
    const { db, path } = createTestDb();
    const batch = makeBatchWithJudgments(db, { votes: [[null], [null]], settings: launchReady({ name: 'draft-one', provider: { kind: 'link' as const }, judgmentsPerPair: 3 }) });
    db.prepare("UPDATE batches SET state = 'draft' WHERE id = ?").run(batch.batchId);
    const env = { DATABASE_PATH: path };
    const file = join(tempDir(), 'change.json');
    writeFileSync(file, JSON.stringify({ judgmentsPerPair: 2, instructions: 'Pick the conversation that reads more naturally.' }));

    expect(await cli(['batches', 'edit', 'draft-one', '--name', 'draft-two'], env)).toMatchObject({ code: 0, stdout: `Batch ${batch.batchId} (draft-two) is updated: 2 pair(s).` });
    expect(await cli(['batches', 'edit', String(batch.batchId), '--from', file], env)).toMatchObject({ code: 0 });
    const row = db.prepare('SELECT name, settings FROM batches WHERE id = ?').get(batch.batchId) as { name: string; settings: string };
    expect(row.name).toBe('draft-two');
    expect(JSON.parse(row.settings)).toMatchObject({ name: 'draft-two', judgmentsPerPair: 2, instructions: 'Pick the conversation that reads more naturally.' });
    expect(auditActions(db, batch.batchId)).toEqual(['batch.update', 'batch.update']);

    expect(await cli(['batches', 'edit', 'draft-two'], env)).toMatchObject({ code: 1, stderr: 'error: batches edit needs --from FILE.json or --name NAME' });
    db.prepare("UPDATE batches SET state = 'open' WHERE id = ?").run(batch.batchId);
    expect(await cli(['batches', 'edit', 'draft-two', '--name', 'late'], env)).toMatchObject({ code: 1, stderr: `error: Batch ${batch.batchId} is open; only a draft batch can be edited.` });
    expect(db.prepare('SELECT name FROM batches WHERE id = ?').pluck().get(batch.batchId)).toBe('draft-two');
  });

  it('batches delete ID, for a draft, removes it with its pairs and audits its name; for an opened batch or one holding answers, refuses and keeps it', async () => {
    const { db, path } = createTestDb();
    const env = { DATABASE_PATH: path };
    const draft = makeBatchWithJudgments(db, { votes: [[null]], settings: { name: 'to-delete' } });
    db.prepare("UPDATE batches SET state = 'draft' WHERE id = ?").run(draft.batchId);
    const opened = makeBatch(db, { state: 'open', settings: { name: 'running' } });
    const answered = makeBatchWithJudgments(db, { votes: [['a']], settings: { name: 'previewed' } });
    db.prepare("UPDATE batches SET state = 'draft' WHERE id = ?").run(answered.batchId);

    expect(await cli(['batches', 'delete', 'to-delete'], env)).toMatchObject({ code: 0, stdout: `Batch ${draft.batchId} (to-delete) is deleted.` });
    expect(db.prepare('SELECT count(*) FROM batches WHERE id = ?').pluck().get(draft.batchId)).toBe(0);
    expect(db.prepare('SELECT count(*) FROM pairs WHERE batch_id = ?').pluck().get(draft.batchId)).toBe(0);
    const audit = db.prepare("SELECT actor, details FROM audit_log WHERE action = 'batch.delete' AND target_id = ?").get(String(draft.batchId)) as { actor: string; details: string };
    expect(audit.actor).toBe('cli');
    expect(JSON.parse(audit.details)).toMatchObject({ name: 'to-delete' });

    expect(await cli(['batches', 'delete', 'running'], env)).toMatchObject({ code: 1, stderr: `error: Batch ${opened.batchId} is open; only a draft batch can be deleted.` });
    expect(await cli(['batches', 'delete', 'previewed'], env)).toMatchObject({ code: 1, stderr: `error: Batch ${answered.batchId} holds answers; it is not deleted.` });
    expect(db.prepare('SELECT count(*) FROM batches WHERE id IN (?, ?)').pluck().get(opened.batchId, answered.batchId)).toBe(2);
  });
});

/** A scenario with two casts sharing its second character: its samples differ only in who plays. */
function scenarioWithTwoCasts(db: ReturnType<typeof createTestDb>['db']) {
  const first = makeScenario(db);
  upsertCharacter(
    db,
    {
      id: `${first.scenarioId}-c3`,
      firstName: 'Cleo',
      lastName: 'Diaz',
      age: 41,
      gender: 'Woman',
      pronouns: 'she/her',
      occupation: 'Teacher',
      publicInfo: 'Public info',
      personalityAndValues: 'Calm.',
      decisionMakingStyle: 'Intuitive',
      secret: 'SECRET',
      bigFive: '',
      moralValues: [],
      schwartzValues: [],
    },
    'test',
    new Date().toISOString(),
  );
  const scenario = db.prepare('SELECT title, category, context, relationship FROM scenarios WHERE id = ?').get(first.scenarioId) as Record<string, string>;
  upsertScenario(
    db,
    {
      id: first.scenarioId,
      title: scenario.title as string,
      category: 'mixed',
      context: scenario.context as string,
      relationship: 'stranger',
      goals: [`GOAL-1-${first.scenarioId}`, `GOAL-2-${first.scenarioId}`],
      casts: [first.characters, [`${first.scenarioId}-c3`, first.characters[1]]],
    },
    'test',
    new Date().toISOString(),
  );
  const second = db.prepare('SELECT id FROM casts WHERE scenario_id = ? ORDER BY position LIMIT 1 OFFSET 1').pluck().get(first.scenarioId) as number;
  return [first, { ...first, castId: second }] as const;
}

describe('the cast of each dialogue', () => {
  it('dialogues list and GET /console/runs/:id, for one scenario played by two casts, name both characters of each row', async () => {
    const t = buildTestApp();
    const runId = makeRun(t.db, { name: 'two-casts' });
    const [first, second] = scenarioWithTwoCasts(t.db);
    makeDialogue(t.db, { runId, scenario: first, mode: 'SCRIPT', model: 'test-model' });
    makeDialogue(t.db, { runId, scenario: second, mode: 'SCRIPT', model: 'test-model' });

    const listed = await cli(['dialogues', 'list', '--run', 'two-casts'], { DATABASE_PATH: t.dbPath });
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+SCENARIO\s+CAST\s+SAMPLE/);
    expect(lines.slice(1).map((line) => /Ana Ito & Ben Okoro|Cleo Diaz & Ben Okoro/.exec(line)?.[0])).toEqual(['Ana Ito & Ben Okoro', 'Cleo Diaz & Ben Okoro']);
    const json = JSON.parse((await cli(['dialogues', 'list', '--run', 'two-casts', '--json'], { DATABASE_PATH: t.dbPath })).stdout) as { cast: string[] }[];
    expect(json.map((d) => d.cast)).toEqual([
      ['Ana Ito', 'Ben Okoro'],
      ['Cleo Diaz', 'Ben Okoro'],
    ]);

    const researcher = await signIn(t.app, t.db, 'researcher');
    const page = await researcher.agent.get(`/console/runs/${runId}`).expect(200);
    expect(page.text).toContain('<th scope="col">Cast</th>');
    expect(page.text).toContain('<td>Ana Ito &amp; Ben Okoro</td>');
    expect(page.text).toContain('<td>Cleo Diaz &amp; Ben Okoro</td>');
  });
});
