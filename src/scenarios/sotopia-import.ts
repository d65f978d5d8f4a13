import { basename } from 'node:path';
import { z } from 'zod';
import { ScenarioFileError } from './library-error.js';
import { type Library, parseRecord } from './load-library.js';
import {
  type Category,
  type Character,
  type Scenario,
  CATEGORIES,
  characterSchema,
  LIBRARY_RECORD_SHAPES,
  parseRelationship,
  scenarioSchema,
} from './scenario.schema.js';
import { seedFrom, seededRandom, seededShuffle } from './seeded-random.js';

// Sotopia's EnvironmentProfile and AgentProfile (github.com/sotopia-lab/sotopia, sotopia/database/persistent_profile.py),
// with Sotopia's defaults for what a record leaves out: relationship stranger (0), empty strings and lists, age 0
// (which Sotopia uses for "not given"; stored here as unknown).
const sotopiaEnvironmentSchema = z.looseObject({
  pk: z.string().nullable().optional(),
  codename: z.string().trim().optional().default(''),
  source: z.string().optional().default(''),
  scenario: z.string().trim().min(1, 'is required'),
  agent_goals: z.array(z.string()).length(2, 'must hold exactly two goals'),
  relationship: z
    .union([z.number(), z.string()])
    .optional()
    .default(0)
    .refine((v) => parseRelationship(v) !== null, {
      message: 'must be 0-5 or one of stranger, know_by_name, acquaintance, friend, romantic_relationship, family_member',
    }),
  agent_constraint: z.array(z.array(z.string())).nullable().optional(),
  category: z.enum(CATEGORIES).optional(),
});

const sotopiaAgentSchema = z.looseObject({
  pk: z.string().nullable().optional(),
  first_name: z.string().trim().min(1, 'is required'),
  last_name: z.string().optional().default(''),
  age: z.number().int().min(0).max(150).nullable().optional().default(0),
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

export type ImportOptions = {
  pairsPerScenario: number;
  seed: number;
  category?: Category;
  /** The slug of a character imported earlier with this Sotopia pk (agents files imported before environments). */
  resolvePk?: (pk: string) => string | undefined;
};

/** A library read from import files, with each record's Sotopia pk and where it came from (for messages). */
export type ImportedLibrary = Library & {
  /** Sotopia pks by the slug given to the record here. */
  pks: { characters: Map<string, string>; scenarios: Map<string, string> };
  /** "FILE: record N" by slug. */
  origins: { characters: Map<string, string>; scenarios: Map<string, string> };
};

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

const FILE_SHAPES = `expected a JSON array of Sotopia profiles or simarena records, one profile (Sotopia's <pk>.json), {"environments": [...], "agents": [...]}, or a Redis dump whose keys end in AgentProfile:<pk> or EnvironmentProfile:<pk>; a record is a Sotopia EnvironmentProfile or AgentProfile, or ${LIBRARY_RECORD_SHAPES}`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record with its pk filled from where Sotopia keeps it (the file name, the Redis key) when the record has none. */
function withPk(record: unknown, pk: string): unknown {
  return isObject(record) && (record.pk === undefined || record.pk === null || record.pk === '') ? { ...record, pk } : record;
}

/**
 * The records of one file in any of Sotopia's shapes: a list (its JSON exports and tests), one profile per file
 * (its local storage, `<pk>.json`), a Redis dump (keys `...AgentProfile:<pk>` holding the JSON, as an object or
 * a JSON string, possibly in RedisJSON's one-element array), or simarena's own list files.
 */
function recordsOf(path: string, data: unknown): unknown[] {
  if (Array.isArray(data)) return data;
  if (!isObject(data)) throw new ScenarioFileError(`${path}: ${FILE_SHAPES}`);
  if (Array.isArray(data.environments) || Array.isArray(data.agents))
    return [...((data.environments as unknown[] | undefined) ?? []), ...((data.agents as unknown[] | undefined) ?? [])];
  if (kindOf(data)) return [withPk(data, basename(path).replace(/\.json$/i, ''))];
  const dumped = Object.entries(data).filter(([key]) => /(AgentProfile|EnvironmentProfile):[^:]+$/.test(key));
  if (dumped.length > 0) {
    return dumped.map(([key, value]) => {
      let record: unknown = value;
      if (typeof record === 'string') {
        try {
          record = JSON.parse(record);
        } catch {
          throw new ScenarioFileError(`${path}: key "${key}": its value is not JSON; dump the profile as JSON`);
        }
      }
      if (Array.isArray(record) && record.length === 1) record = record[0];
      return withPk(record, key.slice(key.lastIndexOf(':') + 1));
    });
  }
  throw new ScenarioFileError(`${path}: ${FILE_SHAPES}`);
}

/** Sorts the records of several files into the four kinds, validating each with its file and index named. */
function collect(files: { path: string; data: unknown }[]) {
  const out = {
    environments: [] as { record: SotopiaEnvironment; origin: string }[],
    agents: [] as { record: SotopiaAgent; origin: string }[],
    characters: [] as { record: Character; origin: string }[],
    scenarios: [] as { record: Scenario; origin: string }[],
  };
  for (const { path, data } of files) {
    const records = recordsOf(path, data);
    if (records.length === 0) throw new ScenarioFileError(`${path}: holds no records; nothing was imported`);
    records.forEach((record, index) => {
      const kind = kindOf(record);
      const one = (schema: z.ZodType) => parseRecord(path, index, record, schema);
      const origin = `${path}: record ${index + 1}`;
      if (kind === 'sotopia-environment') out.environments.push({ record: one(sotopiaEnvironmentSchema) as SotopiaEnvironment, origin });
      else if (kind === 'sotopia-agent') out.agents.push({ record: one(sotopiaAgentSchema) as SotopiaAgent, origin });
      else if (kind === 'character') out.characters.push({ record: one(characterSchema) as Character, origin });
      else if (kind === 'scenario') out.scenarios.push({ record: one(scenarioSchema) as Scenario, origin });
      else
        throw new ScenarioFileError(
          `${path}: record ${index + 1}: not a Sotopia EnvironmentProfile (needs "codename", "scenario", "agent_goals") or AgentProfile (needs "first_name"), nor ${LIBRARY_RECORD_SHAPES}`,
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
    age: agent.age === null || agent.age === 0 ? null : agent.age,
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
export function importProfiles(files: { path: string; data: unknown }[], options: ImportOptions): ImportedLibrary {
  const found = collect(files);
  const library: ImportedLibrary = {
    characters: found.characters.map((c) => c.record),
    scenarios: found.scenarios.map((s) => s.record),
    pks: { characters: new Map(), scenarios: new Map() },
    origins: {
      characters: new Map(found.characters.map((c) => [c.record.id, c.origin])),
      scenarios: new Map(found.scenarios.map((s) => [s.record.id, s.origin])),
    },
  };
  const usedIds = new Set(library.characters.map((c) => c.id));
  const idByPk = new Map<string, string>();
  const agentIds: string[] = [];
  const nameOf = new Map<string, string>();
  for (const { record: agent, origin } of found.agents) {
    let id = slugify(`${agent.first_name} ${agent.last_name}`);
    for (let n = 2; usedIds.has(id); n++) id = `${slugify(`${agent.first_name} ${agent.last_name}`)}-${n}`;
    usedIds.add(id);
    if (agent.pk) {
      idByPk.set(agent.pk, id);
      library.pks.characters.set(id, agent.pk);
    }
    library.origins.characters.set(id, origin);
    agentIds.push(id);
    nameOf.set(id, `${agent.first_name} ${agent.last_name}`.trim());
    library.characters.push(toCharacter(agent, id));
  }
  const pkToId = (pk: string) => idByPk.get(pk) ?? options.resolvePk?.(pk);
  const constrainedByKnownAgents = (env: SotopiaEnvironment) =>
    env.agent_constraint?.length === 2 && env.agent_constraint.every((side) => side.some((pk) => pkToId(pk) !== undefined));
  const uncast = found.environments.find((e) => !constrainedByKnownAgents(e.record));
  if (uncast && agentIds.length < 2) {
    throw new ScenarioFileError(
      `${uncast.origin}: Sotopia environments need at least two AgentProfile records to cast characters; pass the agents file too (scenarios import envs.json agents.json)`,
    );
  }
  const scenarioIds = new Set(library.scenarios.map((s) => s.id));
  for (const { record: env, origin } of found.environments) {
    // Sotopia's codename defaults to ""; the pk, then the scenario's first words, name the scenario then.
    const base = slugify(env.codename || env.pk || titleOf(env.scenario));
    let id = base;
    for (let n = 2; scenarioIds.has(id); n++) id = `${base}-${n}`;
    scenarioIds.add(id);
    if (env.pk) library.pks.scenarios.set(id, env.pk);
    library.origins.scenarios.set(id, origin);
    const random = seededRandom(seedFrom(options.seed, env.codename, env.pk ?? ''));
    const constraint = env.agent_constraint;
    let candidates: [string, string][];
    if (constraint && constraint.length === 2 && (idByPk.size > 0 || constrainedByKnownAgents(env))) {
      const firsts = (constraint[0] ?? []).map(pkToId).filter((x): x is string => !!x);
      const seconds = (constraint[1] ?? []).map(pkToId).filter((x): x is string => !!x);
      candidates = firsts.flatMap((a) => seconds.filter((b) => b !== a).map((b): [string, string] => [a, b]));
      if (candidates.length === 0)
        throw new ScenarioFileError(`${origin}: environment "${env.codename || env.pk || id}": no agent of its agent_constraint is in the files given; pass the AgentProfile files too`);
    } else {
      // A drawn cast never pairs two characters of the same name (a SCRIPT could not tell its speakers apart).
      candidates = agentIds.flatMap((a) =>
        agentIds.filter((b) => b !== a && nameOf.get(a) !== nameOf.get(b)).map((b): [string, string] => [a, b]),
      );
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
