import { z } from 'zod';
import { ScenarioFileError } from './library-error.js';
import { type Library, parseRecord } from './load-library.js';
import {
  type Category,
  type Character,
  type Scenario,
  CATEGORIES,
  characterSchema,
  parseRelationship,
  scenarioSchema,
} from './scenario.schema.js';
import { seedFrom, seededRandom, seededShuffle } from './seeded-random.js';

// Sotopia's EnvironmentProfile and AgentProfile (github.com/sotopia-lab/sotopia, sotopia/database/persistent_profile.py).
const sotopiaEnvironmentSchema = z.looseObject({
  pk: z.string().optional(),
  codename: z.string().trim().min(1, 'is required'),
  source: z.string().optional().default(''),
  scenario: z.string().trim().min(1, 'is required'),
  agent_goals: z.array(z.string()).length(2, 'must hold exactly two goals'),
  relationship: z.union([z.number(), z.string()]).refine((v) => parseRelationship(v) !== null, {
    message: 'must be 0-5 or one of stranger, know_by_name, acquaintance, friend, romantic_relationship, family_member',
  }),
  agent_constraint: z.array(z.array(z.string())).nullable().optional(),
  category: z.enum(CATEGORIES).optional(),
});

const sotopiaAgentSchema = z.looseObject({
  pk: z.string().optional(),
  first_name: z.string().trim().min(1, 'is required'),
  last_name: z.string().optional().default(''),
  age: z.number().int().min(0).max(150).nullable().optional(),
  occupation: z.string().optional().default(''),
  gender: z.string().optional().default(''),
  gender_pronoun: z.string().optional().default(''),
  public_info: z.string().optional().default(''),
  big_five: z.string().optional().default(''),
  moral_values: z.array(z.string()).optional().default([]),
  schwartz_personal_values: z.array(z.string()).optional().default([]),
  personality_and_values: z.string().optional().default(''),
  decision_making_style: z.string().optional().default(''),
  secret: z.string().optional().default(''),
});

type SotopiaEnvironment = z.infer<typeof sotopiaEnvironmentSchema>;
type SotopiaAgent = z.infer<typeof sotopiaAgentSchema>;

export type ImportOptions = { pairsPerScenario: number; seed: number; category?: Category };

export function slugify(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'item'
  );
}

type RecordKind = 'sotopia-environment' | 'sotopia-agent' | 'character' | 'scenario';

function kindOf(record: unknown): RecordKind | null {
  if (typeof record !== 'object' || record === null) return null;
  const r = record as Record<string, unknown>;
  if ('agent_goals' in r || 'codename' in r) return 'sotopia-environment';
  if ('first_name' in r) return 'sotopia-agent';
  if ('firstName' in r) return 'character';
  if ('goals' in r || 'casts' in r) return 'scenario';
  return null;
}

/** Sorts the records of several files into the four kinds, validating each with its file and index named. */
function collect(files: { path: string; data: unknown }[]) {
  const out = {
    environments: [] as SotopiaEnvironment[],
    agents: [] as SotopiaAgent[],
    characters: [] as Character[],
    scenarios: [] as Scenario[],
  };
  for (const { path, data } of files) {
    const records = Array.isArray(data)
      ? data
      : typeof data === 'object' && data !== null
        ? [
            ...(((data as Record<string, unknown>).environments as unknown[]) ?? []),
            ...(((data as Record<string, unknown>).agents as unknown[]) ?? []),
          ]
        : null;
    if (!records) throw new ScenarioFileError(`${path}: expected a JSON array of Sotopia profiles or simarena records`);
    records.forEach((record, index) => {
      const kind = kindOf(record);
      const one = (schema: z.ZodType) => parseRecord(path, index, record, schema);
      if (kind === 'sotopia-environment') out.environments.push(one(sotopiaEnvironmentSchema) as SotopiaEnvironment);
      else if (kind === 'sotopia-agent') out.agents.push(one(sotopiaAgentSchema) as SotopiaAgent);
      else if (kind === 'character') out.characters.push(one(characterSchema) as Character);
      else if (kind === 'scenario') out.scenarios.push(one(scenarioSchema) as Scenario);
      else
        throw new ScenarioFileError(
          `${path}: record ${index + 1}: not a Sotopia EnvironmentProfile (needs "codename", "scenario", "agent_goals") or AgentProfile (needs "first_name"), nor a simarena character or scenario`,
        );
    });
  }
  return out;
}

function toCharacter(agent: SotopiaAgent, id: string): Character {
  return {
    id,
    firstName: agent.first_name,
    lastName: agent.last_name,
    age: agent.age ?? null,
    gender: agent.gender,
    pronouns: agent.gender_pronoun,
    occupation: agent.occupation,
    publicInfo: agent.public_info,
    personalityAndValues: agent.personality_and_values,
    decisionMakingStyle: agent.decision_making_style,
    secret: agent.secret,
    bigFive: agent.big_five,
    moralValues: agent.moral_values,
    schwartzValues: agent.schwartz_personal_values,
  };
}

function titleOf(scenario: string): string {
  const first = scenario.split(/(?<=[.!?])\s/)[0] ?? scenario;
  return first.length > 90 ? `${first.slice(0, 87)}…` : first;
}

/**
 * Turns Sotopia profiles (and simarena records) into a library. Characters are paired with each
 * environment by its agent_constraint when agents carry a pk, otherwise by a seeded draw, so the
 * same files and seed always give the same casts.
 */
export function importProfiles(files: { path: string; data: unknown }[], options: ImportOptions): Library {
  const found = collect(files);
  const library: Library = { characters: [...found.characters], scenarios: [...found.scenarios] };
  const usedIds = new Set(library.characters.map((c) => c.id));
  const idByPk = new Map<string, string>();
  const agentIds: string[] = [];
  for (const agent of found.agents) {
    let id = slugify(`${agent.first_name} ${agent.last_name}`);
    for (let n = 2; usedIds.has(id); n++) id = `${slugify(`${agent.first_name} ${agent.last_name}`)}-${n}`;
    usedIds.add(id);
    if (agent.pk) idByPk.set(agent.pk, id);
    agentIds.push(id);
    library.characters.push(toCharacter(agent, id));
  }
  if (found.environments.length > 0 && agentIds.length < 2) {
    throw new ScenarioFileError(
      'Sotopia environments need at least two AgentProfile records to cast characters; pass the agents file too (scenarios import envs.json agents.json)',
    );
  }
  const scenarioIds = new Set(library.scenarios.map((s) => s.id));
  for (const env of found.environments) {
    let id = slugify(env.codename);
    for (let n = 2; scenarioIds.has(id); n++) id = `${slugify(env.codename)}-${n}`;
    scenarioIds.add(id);
    const random = seededRandom(seedFrom(options.seed, env.codename, env.pk ?? ''));
    const constraint = env.agent_constraint;
    let candidates: [string, string][];
    if (constraint && constraint.length === 2 && idByPk.size > 0) {
      const firsts = (constraint[0] ?? []).map((pk) => idByPk.get(pk)).filter((x): x is string => !!x);
      const seconds = (constraint[1] ?? []).map((pk) => idByPk.get(pk)).filter((x): x is string => !!x);
      candidates = firsts.flatMap((a) => seconds.filter((b) => b !== a).map((b): [string, string] => [a, b]));
      if (candidates.length === 0)
        throw new ScenarioFileError(`environment "${env.codename}": no agent of its agent_constraint is in the files given`);
    } else {
      candidates = agentIds.flatMap((a) => agentIds.filter((b) => b !== a).map((b): [string, string] => [a, b]));
    }
    const casts = seededShuffle(candidates, random).slice(0, options.pairsPerScenario);
    library.scenarios.push({
      id,
      title: titleOf(env.scenario),
      category: env.category ?? options.category ?? 'mixed',
      context: env.scenario,
      relationship: parseRelationship(env.relationship) ?? 'stranger',
      goals: [env.agent_goals[0] ?? '', env.agent_goals[1] ?? ''],
      casts,
    });
  }
  return library;
}
