// The JSON columns of runs and dialogues, as the code reads them back (db/json-column.ts parses through these).
import { z } from 'zod';
import { MODES } from './mode.js';

/** runs.modes: the modes of a run, upper case. */
export const runModesSchema = z.array(z.enum(MODES));

/** runs.modes where only the names are shown (lists, JSON output): any text, as stored. */
export const runModeNamesSchema = z.array(z.string());

/** runs.settings of a generation run (create-run.ts, RunSettings); other keys (a SCRIPT batch's) are kept. */
export const runSettingsSchema = z.looseObject({
  timeoutMs: z.number(),
  maxRetries: z.number(),
  maxInvalidRetries: z.number(),
  promptHash: z.string(),
  minSpokenTurns: z.number().optional(),
});

/** runs.settings while a SCRIPT batch is out: the batch to collect (script-batch.ts). */
export const scriptBatchSettingsSchema = runSettingsSchema.extend({
  scriptBatch: z.object({ batchId: z.string(), inputFileId: z.string(), pollMs: z.number().positive().optional() }).optional(),
});

/** runs.settings of any run, for the simulation card: imports and the demo store fewer settings, or none. */
export const cardSettingsSchema = z.looseObject({ promptHash: z.string().optional(), minSpokenTurns: z.number().optional() });

/** dialogues.meta → earlier_failures: the failed generations a regenerated dialogue replaced. */
export const earlierFailuresSchema = z.array(z.looseObject({ generation: z.number(), reason: z.string().nullable().optional() }));

/** runs.simulation_card when only its evaluations are rewritten: an object, kept as it is. */
export const storedCardSchema = z.looseObject({});

/** runs.simulation_card where only its call totals are read (the summary after `generate`). */
export const cardCostSchema = z.looseObject({ calls: z.looseObject({ estimated_cost: z.number().nullable() }) });

/** llm_calls.request as `simarena calls show` prints it: model, sampling settings and the messages the model saw. */
export const storedChatRequestSchema = z.looseObject({
  model: z.string(),
  temperature: z.number().nullable().optional(),
  seed: z.number().nullable().optional(),
  response_format: z.looseObject({ type: z.string() }),
  messages: z.array(z.looseObject({ role: z.string(), content: z.string() })),
});

/** A JSON object column printed as stored (`runs show --json`, `evaluations list --json`): only its being an object is checked. */
export const storedObjectSchema = z.record(z.string(), z.unknown());

/** llm_calls.request and .response as `calls show --json` prints them: any JSON, as stored. */
export const storedJsonSchema = z.json();

/** llm_calls.request as the dialogue browser shows it: its list of messages, each read leniently. */
export const shownRequestSchema = z.looseObject({ messages: z.array(z.unknown()) });

/** characters.moral_values and characters.schwartz_values, as the prompts list them. */
export const characterValuesSchema = z.array(z.string());
