import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { CATEGORIES } from '../scenarios/scenario.schema.js';
import { type CastRow, type ScenarioRow, listCasts, listScenarios } from '../scenarios/scenario.queries.js';
import { seedFrom } from '../scenarios/seeded-random.js';
import { insertDialogue } from './dialogue.queries.js';
import { GenerationInputError } from './generation-error.js';
import { GENERATED_MODES, type GeneratedMode, isGeneratedMode, parseMode } from './mode.js';
import { DEFAULT_PROMPT_VERSION, loadPrompts } from './prompts.js';
import { insertGenerationRun, runNameTaken } from './run.queries.js';

/** Options of a generation run, as the CLI and the console give them; validated here, at the edge. */
export const runOptionsSchema = z.object({
  name: z.string().trim().min(1).max(100).regex(/^[^\s]+$/, 'must have no spaces').optional(),
  scenarios: z.string().trim().min(1, 'name scenario ids, a category or all'),
  modes: z
    .array(z.string())
    .min(1, 'name at least one mode')
    .transform((list, ctx) => {
      const out: GeneratedMode[] = [];
      for (const m of list) {
        const mode = parseMode(m);
        if (!mode) ctx.addIssue({ code: 'custom', message: `unknown mode "${m}" (use ${GENERATED_MODES.join(', ').toLowerCase()})` });
        else if (!isGeneratedMode(mode))
          ctx.addIssue({ code: 'custom', message: `${mode} dialogues are played or written by people, not generated: collect them with a role-play or writing batch, or import them (simarena dialogues import --mode ${mode.toLowerCase()})` });
        else if (!out.includes(mode)) out.push(mode);
      }
      return out;
    }),
  model: z.string().trim().min(1, 'name a model'),
  endpointName: z.string().min(1).default('default'),
  baseUrl: z.string().min(1),
  samples: z.number().int().min(1).max(1000).default(1),
  concurrency: z.number().int().min(1).max(256).default(4),
  temperature: z.number().min(0).max(2).default(0.7),
  maxTokens: z.number().int().min(1).nullable().default(null),
  maxTurns: z.number().int().min(1).max(200).default(20),
  seed: z.number().int().min(0).max(2 ** 31 - 1).default(0),
  responseFormat: z.enum(['json_schema', 'json_object']).default('json_schema'),
  promptVersion: z.string().regex(/^v\d+$/).default(DEFAULT_PROMPT_VERSION),
  timeoutMs: z.number().int().min(100).default(120_000),
  maxRetries: z.number().int().min(0).max(20).default(5),
  maxInvalidRetries: z.number().int().min(0).max(10).default(2),
  // A dialogue with fewer spoken turns fails (reason stored) and never enters a batch.
  minSpokenTurns: z.number().int().min(0).max(200).default(4),
  pricePromptPerMTok: z.number().min(0).nullable().default(null),
  priceCompletionPerMTok: z.number().min(0).nullable().default(null),
  createdBy: z.string().nullable().default(null),
});
export type RunOptionsInput = z.input<typeof runOptionsSchema>;
export type RunOptions = z.output<typeof runOptionsSchema>;

/** The settings kept in runs.settings (everything not in its own column). */
export type RunSettings = {
  timeoutMs: number;
  maxRetries: number;
  maxInvalidRetries: number;
  promptHash: string;
  /** Absent in runs made before the gate existed: no minimum. */
  minSpokenTurns?: number;
};

export type PlannedDialogue = { scenario: ScenarioRow; cast: CastRow; sampleIndex: number; mode: GeneratedMode; seed: number };

/** Scenarios named by a selector: "all", a category, or ids and categories separated by commas. */
export function selectScenarios(db: Db, selector: string): ScenarioRow[] {
  const all = listScenarios(db);
  const picked = new Map<string, ScenarioRow>();
  const unknown: string[] = [];
  for (const part of selector.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (part === 'all') all.forEach((s) => picked.set(s.id, s));
    else if ((CATEGORIES as readonly string[]).includes(part)) all.filter((s) => s.category === part).forEach((s) => picked.set(s.id, s));
    else {
      const found = all.find((s) => s.id === part);
      if (found) picked.set(found.id, found);
      else unknown.push(part);
    }
  }
  if (unknown.length > 0)
    throw new GenerationInputError(
      `unknown scenario ${unknown.map((u) => `"${u}"`).join(', ')}: see \`simarena scenarios list\` for ids, or use a category (${CATEGORIES.join(', ')}) or all`,
    );
  if (picked.size === 0)
    throw new GenerationInputError(
      all.length === 0
        ? `no scenario matches "${selector}": this database has no scenarios (its built-in library was removed); import scenarios with \`simarena scenarios import FILE...\` (the built-in library is data/scenarios/*.json)`
        : `no scenario matches "${selector}": see \`simarena scenarios list\``,
    );
  return [...picked.values()];
}

/**
 * Every dialogue of a run: each scenario, each of its casts, each sample, one per mode. The seed depends on
 * the run seed and the scenario sample (not the mode), so the dialogues of one sample can be paired later
 * and samples of one scenario differ.
 */
export function planDialogues(db: Db, options: Pick<RunOptions, 'scenarios' | 'samples' | 'modes' | 'seed'>): PlannedDialogue[] {
  const planned: PlannedDialogue[] = [];
  for (const scenario of selectScenarios(db, options.scenarios)) {
    for (const cast of listCasts(db, scenario.id)) {
      for (let sampleIndex = 0; sampleIndex < options.samples; sampleIndex++) {
        const seed = seedFrom(options.seed, scenario.id, cast.character_1_id, cast.character_2_id, sampleIndex) & 0x7fffffff;
        for (const mode of options.modes) planned.push({ scenario, cast, sampleIndex, mode, seed });
      }
    }
  }
  return planned;
}

function defaultRunName(db: Db, model: string, now: Date): string {
  const stamp = now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  const base = `gen-${stamp}-${model.replace(/[^A-Za-z0-9._-]+/g, '-')}`.slice(0, 90);
  let name = base;
  for (let n = 2; runNameTaken(db, name); n++) name = `${base}-${n}`;
  return name;
}

export function parseRunOptions(input: RunOptionsInput): RunOptions {
  const parsed = runOptionsSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new GenerationInputError(`${issue?.path.join('.') || 'options'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Records a run and all its dialogues (pending) in one transaction; nothing is called yet. */
export function createRun(db: Db, input: RunOptionsInput, now: Date): number {
  const options = parseRunOptions(input);
  if (options.name && runNameTaken(db, options.name))
    throw new GenerationInputError(`a run named "${options.name}" exists: choose another --run-name, or --resume it`);
  let promptHash: string;
  try {
    promptHash = loadPrompts(options.promptVersion).hash;
  } catch {
    throw new GenerationInputError(`prompt version "${options.promptVersion}" not found in src/generation/prompts/`);
  }
  const planned = planDialogues(db, options);
  if (planned.length === 0) throw new GenerationInputError(`the scenarios "${options.scenarios}" have no cast of characters: add casts to them first`);
  const settings: RunSettings = {
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    maxInvalidRetries: options.maxInvalidRetries,
    minSpokenTurns: options.minSpokenTurns,
    promptHash,
  };
  return db.transaction(() => {
    const runId = insertGenerationRun(
      db,
      {
        name: options.name ?? defaultRunName(db, options.model, now),
        endpointName: options.endpointName,
        baseUrl: options.baseUrl,
        model: options.model,
        modes: options.modes,
        scenarioSelector: options.scenarios,
        samples: options.samples,
        temperature: options.temperature,
        maxTokens: options.maxTokens,
        maxTurns: options.maxTurns,
        seed: options.seed,
        concurrency: options.concurrency,
        responseFormat: options.responseFormat,
        promptVersion: options.promptVersion,
        pricePromptPerMTok: options.pricePromptPerMTok,
        priceCompletionPerMTok: options.priceCompletionPerMTok,
        settings,
        createdBy: options.createdBy,
      },
      now,
    );
    for (const d of planned) {
      insertDialogue(
        db,
        {
          runId,
          scenarioId: d.scenario.id,
          castId: d.cast.id,
          sampleIndex: d.sampleIndex,
          mode: d.mode,
          model: options.model,
          origin: 'generated',
          state: 'pending',
          seed: d.seed,
          promptVersion: options.promptVersion,
        },
        now,
      );
    }
    return runId;
  })();
}
