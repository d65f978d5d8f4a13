// A realism batch (issue 53) for the rating tests: per scenario one HUMANS conversation (the real one, model `human`)
// and a SCRIPT and an AGENTS dialogue of a model, compared HUMANS:human against each, with a naturalness question and
// a which-is-real question, formed by the product's own createBatch and opened.
import { transitionBatch } from '../../src/batches/batch.commands.js';
import type { BatchSettingsInput } from '../../src/batches/batch.schema.js';
import { createBatch } from '../../src/batches/create-batch.js';
import type { Db } from '../../src/db/connection.js';
import { launchReady, makeDialogue, makeRun, makeScenario, makeTurns } from '../helpers/factories.js';
import { MODEL } from './rating-fixtures.js';

export const REAL = 'HUMANS:human';

export const REALISM_QUESTIONS: NonNullable<BatchSettingsInput['questions']> = [
  { id: 'natural', text: 'Which conversation sounds more natural?', reason: 'off' },
  { id: 'real', kind: 'which-is-real', text: 'One of these conversations happened between two real people. Which one?', real: REAL, reason: 'off' },
];

export const OPENED_AT = new Date('2026-01-15T12:00:00.000Z');

export function realismSettings(runs: string[], overrides: Partial<BatchSettingsInput> = {}): BatchSettingsInput {
  return launchReady({
    name: 'Which is real',
    runs,
    comparisons: [
      [REAL, `SCRIPT:${MODEL}`],
      [`AGENTS:${MODEL}`, REAL],
    ],
    questions: REALISM_QUESTIONS,
    equivalenceMargin: 0.1,
    provider: { kind: 'link' },
    ...overrides,
  });
}

/** Runs of `samples` scenarios: the people's (HUMANS) and the model's (SCRIPT, AGENTS); the batch is opened unless `open` is false. */
export function seedRealismBatch(db: Db, options: { samples?: number; settings?: Partial<BatchSettingsInput>; open?: boolean } = {}) {
  const suffix = Math.random().toString(36).slice(2, 7);
  const people = `people-${suffix}`;
  const models = `models-${suffix}`;
  const peopleRun = makeRun(db, { name: people, model: 'human', modes: ['HUMANS'] });
  const modelRun = makeRun(db, { name: models, model: MODEL, modes: ['SCRIPT', 'AGENTS'] });
  for (let i = 0; i < (options.samples ?? 3); i += 1) {
    const scenario = makeScenario(db);
    makeDialogue(db, { runId: peopleRun, scenario, mode: 'HUMANS', model: 'human', turns: makeTurns(8, 7) });
    makeDialogue(db, { runId: modelRun, scenario, mode: 'SCRIPT', model: MODEL, turns: makeTurns(6, 8) });
    makeDialogue(db, { runId: modelRun, scenario, mode: 'AGENTS', model: MODEL, turns: makeTurns(6, 12) });
  }
  const created = createBatch(db, realismSettings([people, models], options.settings), { actor: 'test', now: OPENED_AT });
  if (options.open !== false) transitionBatch(db, created.batchId, 'open', 'test', OPENED_AT);
  return { ...created, runNames: [people, models] };
}
