import { z } from 'zod';
import type { Config } from '../config.js';
import type { Db } from '../db/connection.js';
import { planDialogues, runOptionsSchema, type RunOptionsInput } from '../generation/create-run.js';
import { type ResolvedEndpoint, resolveEndpoint } from '../generation/endpoints.js';
import { estimateRun, type RunEstimate } from '../generation/estimate-run.js';
import { GenerationInputError } from '../generation/generation-error.js';
import { runNameTaken } from '../generation/run.queries.js';
import { type FieldErrors, fieldErrorsOf } from '../web/field-errors.js';

const blankToUndefined = (v: unknown) => (v === '' ? undefined : v);
const num = (schema: z.ZodNumber) => z.preprocess(blankToUndefined, z.coerce.number({ message: 'must be a number' }).pipe(schema).optional());
const list = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The console's run form as posted; the options then go through the generation engine's own schema. */
export const runFormSchema = z.object({
  name: z.preprocess(blankToUndefined, z.string().trim().optional()),
  scenarios: z.preprocess((v) => (typeof v === 'string' ? v : ''), z.string().trim()),
  // Scenario ids ticked in the picker (views/console/run-form.ejs).
  pick: z.preprocess(list, z.array(z.string().trim().min(1).max(200)).max(10_000)),
  modes: z.preprocess(list, z.array(z.string())),
  model: z.string({ message: 'is required' }).trim().min(1, 'name a model'),
  endpoint: z.preprocess(blankToUndefined, z.string().trim().default('default')),
  samples: num(z.number().int('must be a whole number').min(1).max(1000)),
  temperature: num(z.number().min(0).max(2)),
  concurrency: num(z.number().int('must be a whole number').min(1).max(256)),
  maxTurns: num(z.number().int('must be a whole number').min(1).max(200)),
  seed: num(z.number().int('must be a whole number').min(0).max(2 ** 31 - 1)),
  // As `generate --min-spoken-turns`: blank means the engine's default (4).
  minSpokenTurns: num(z.number().int('must be a whole number').min(0, 'must be 0 or more').max(200, 'must be 200 or fewer')),
});
export type RunForm = z.output<typeof runFormSchema>;

/**
 * The selector the run is given: the typed one plus the ticked ids. "all" (the field's default) gives way to ticked
 * scenarios, since "all and these" can only mean a picker that was used without clearing the field.
 */
export function scenarioSelector(form: Pick<RunForm, 'scenarios' | 'pick'>): string {
  const typed = form.scenarios.trim();
  if (form.pick.length === 0) return typed;
  return [...(typed === 'all' ? [] : [typed]), ...form.pick].filter(Boolean).join(',');
}

export type CheckedRunForm =
  | { ok: true; input: RunOptionsInput; endpoint: ResolvedEndpoint; estimate: RunEstimate & { scenarios: number; samples: number; maxTurns: number } }
  | { ok: false; errors: FieldErrors };

// The engine's option names, mapped back to the form's field names, so its messages land beside the right input.
const FIELD_OF: Record<string, string> = { endpointName: 'endpoint', baseUrl: 'endpoint' };

/**
 * Checks a posted run form the way `generate` would and, when it is valid, plans it and estimates it with the same
 * function as `generate --dry-run`: each problem is returned under the field it concerns.
 */
export function checkRunForm(db: Db, config: Config, body: unknown, createdBy: string): CheckedRunForm {
  const parsed = runFormSchema.safeParse(body);
  if (!parsed.success) return { ok: false, errors: fieldErrorsOf(parsed.error) };
  const form = parsed.data;
  const errors: FieldErrors = {};
  const selector = scenarioSelector(form);
  if (!selector) errors.scenarios = 'tick scenarios below, or type all, a category or scenario ids';
  if (form.name && runNameTaken(db, form.name)) errors.name = `a run named "${form.name}" exists: choose another name`;
  let endpoint: ResolvedEndpoint | null = null;
  try {
    endpoint = resolveEndpoint(config, config.env, form.endpoint, form.model);
  } catch (error) {
    if (!(error instanceof GenerationInputError)) throw error;
    errors.endpoint = error.message;
  }
  if (!endpoint || Object.keys(errors).length > 0) return { ok: false, errors };
  const input: RunOptionsInput = {
    name: form.name,
    scenarios: selector,
    modes: form.modes,
    model: form.model,
    endpointName: endpoint.name,
    baseUrl: endpoint.baseUrl,
    samples: form.samples,
    temperature: form.temperature,
    concurrency: form.concurrency,
    maxTurns: form.maxTurns,
    seed: form.seed,
    minSpokenTurns: form.minSpokenTurns,
    pricePromptPerMTok: endpoint.price?.promptPerMTok ?? null,
    priceCompletionPerMTok: endpoint.price?.completionPerMTok ?? null,
    createdBy,
  };
  const options = runOptionsSchema.safeParse(input);
  if (!options.success) {
    const engineErrors = fieldErrorsOf(options.error);
    return { ok: false, errors: Object.fromEntries(Object.entries(engineErrors).map(([k, v]) => [FIELD_OF[k] ?? k, v])) };
  }
  try {
    const planned = planDialogues(db, options.data);
    if (planned.length === 0) return { ok: false, errors: { scenarios: 'these scenarios have no cast of characters: add casts to them first' } };
    const estimate = estimateRun(db, planned, options.data);
    return {
      ok: true,
      input,
      endpoint,
      estimate: { ...estimate, scenarios: new Set(planned.map((p) => p.scenario.id)).size, samples: options.data.samples, maxTurns: options.data.maxTurns },
    };
  } catch (error) {
    if (error instanceof GenerationInputError) return { ok: false, errors: { scenarios: error.message } };
    throw error;
  }
}
