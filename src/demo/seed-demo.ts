import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { insertDialogue, replaceTurns } from '../generation/dialogue.queries.js';
import { ACTIONS, GENERATED_MODES } from '../generation/mode.js';
import { insertSimpleRun } from '../generation/run.queries.js';
import { parseRecords, readJsonFile } from '../scenarios/load-library.js';
import { slugSchema } from '../scenarios/scenario.schema.js';

export const DEMO_RUN_NAME = 'demo-handwritten';
/** The "model" of hand-written demo dialogues: says plainly that no model wrote them. */
export const DEMO_MODEL = 'handwritten-demo';

const demoDialogueSchema = z.strictObject({
  scenario: slugSchema,
  cast: z.tuple([slugSchema, slugSchema]),
  mode: z.enum(GENERATED_MODES),
  turns: z
    .array(z.strictObject({ speaker: z.union([z.literal(1), z.literal(2)]), action: z.enum(ACTIONS), text: z.string() }))
    .min(1),
});

export const demoDialoguesFile = new URL('../../data/demo/dialogues.json', import.meta.url).pathname;

export type DemoSeed = { runId: number } | { skipped: string } | null;

/**
 * Stores the hand-written demo dialogues once, in a run of kind "demo", each flagged illustrative
 * so that nobody takes them for model output. Returns the run id, null when already present, or why it was
 * skipped: a database whose user removed or changed the built-in scenarios the demo plays is still a valid
 * database, and the server must start on it.
 */
export function seedDemoDialogues(db: Db, now: Date, file = demoDialoguesFile): DemoSeed {
  if (db.prepare('SELECT 1 FROM runs WHERE name = :name').get({ name: DEMO_RUN_NAME })) return null;
  const dialogues = parseRecords(file, readJsonFile(file), demoDialogueSchema);
  const findCast = db.prepare<{ scenario: string; first: string; second: string }, { id: number }>(
    'SELECT id FROM casts WHERE scenario_id = :scenario AND character_1_id = :first AND character_2_id = :second',
  );
  const missing = [...new Set(dialogues.filter((d) => !findCast.get({ scenario: d.scenario, first: d.cast[0], second: d.cast[1] })).map((d) => d.scenario))];
  if (missing.length > 0) {
    return { skipped: `demo not seeded: its scenario/cast ${missing.join(', ')} is not in this database's library (removed or changed)` };
  }
  const runId = db.transaction(() => {
    const runId = insertSimpleRun(
      db,
      { name: DEMO_RUN_NAME, kind: 'demo', state: 'complete', model: DEMO_MODEL, modes: [...GENERATED_MODES], createdBy: 'system' },
      now,
    );
    for (const d of dialogues) {
      const cast = findCast.get({ scenario: d.scenario, first: d.cast[0], second: d.cast[1] });
      if (!cast) throw new Error(`${file}: demo dialogue names a scenario/cast that vanished: ${d.scenario}`);
      const id = insertDialogue(
        db,
        {
          runId,
          scenarioId: d.scenario,
          castId: cast.id,
          sampleIndex: 0,
          mode: d.mode,
          model: DEMO_MODEL,
          origin: 'demo',
          illustrative: true,
          state: 'complete',
          endReason: d.turns.at(-1)?.action === 'leave' ? 'left' : 'script',
          meta: { note: 'Illustrative example written by hand for the demo; not model output.' },
        },
        now,
      );
      replaceTurns(db, id, d.turns);
    }
    return runId;
  })();
  return { runId };
}
