import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { z } from 'zod';
import type { Db } from '../db/connection.js';
import {
  characterExists,
  ensureCast,
  findCharacterByAlias,
  findCharactersByName,
  findScenarioByAlias,
  getCharacter,
  getScenario,
  listCasts,
  listScenarios,
} from '../scenarios/scenario.queries.js';
import { fullName } from './build-messages.js';
import { dialogueRecordSchema } from './dialogue-jsonl.js';
import { type NewTurn, insertDialogue, replaceTurns } from './dialogue.queries.js';
import { GenerationInputError } from './generation-error.js';
import { HUMAN_MODEL, MODES, type Mode, parseMode } from './mode.js';
import { insertSimpleRun, runNameTaken } from './run.queries.js';
import {
  type EpisodeLog,
  episodeAgentNames,
  episodeFirstObservation,
  episodeFromJsonl,
  episodeJsonlSchema,
  episodeLogSchema,
  episodeShapeOf,
  episodeTurns,
  modeFromTag,
} from './sotopia-episodes.js';

// Import of dialogues made elsewhere (simarena JSONL, Sotopia EpisodeLog JSON), so that published or earlier
// episodes can be rated. Everything of one file goes into one run of kind "import", in one transaction.

export type ImportDialoguesOptions = { mode?: string; model?: string; humanCharacter?: 1 | 2; scenarioId?: string; runName?: string; createdBy?: string };

const MODE_CHOICES = MODES.map((m) => m.toLowerCase()).join(', ');

type HumanSide = { model: string; meta: { human_character?: 1 | 2 } };

/**
 * The model of an imported dialogue of the human modes, and who played what: HUMANS and HUMAN_SCRIPT have the model
 * `human` (no model took part; any other is refused rather than stored as a false condition); HUMAN_AGENT has the
 * agent's model and the character the person played (`human_character`, or `--human-character`).
 */
function humanSide(mode: Mode, model: string | undefined, humanCharacter: 1 | 2 | undefined, fail: (message: string) => never): HumanSide | null {
  if (mode === 'HUMANS' || mode === 'HUMAN_SCRIPT') {
    if (model !== undefined && model !== HUMAN_MODEL) return fail(`a ${mode} dialogue has the model "${HUMAN_MODEL}" (people wrote it), not "${model}"`);
    return { model: HUMAN_MODEL, meta: {} };
  }
  if (mode !== 'HUMAN_AGENT') return null;
  if (!model || model === HUMAN_MODEL) return fail('a HUMAN_AGENT dialogue needs the model that played the agent: give --model or a "model" field');
  if (!humanCharacter) return fail('a HUMAN_AGENT dialogue needs the character the person played: give --human-character 1|2 or a "human_character" field');
  return { model, meta: { human_character: humanCharacter } };
}

/** JSON (an array or one object) or JSONL (one object a line). */
export function readDialogueRecords(path: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new GenerationInputError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const trimmed = text.trim();
  if (trimmed === '') throw new GenerationInputError(`${path}: the file is empty`);
  try {
    const whole = JSON.parse(trimmed) as unknown;
    // `simarena export --format sotopia` writes { simarena: provenance, episodes: [...] }.
    if (typeof whole === 'object' && whole !== null && !Array.isArray(whole) && Array.isArray((whole as { episodes?: unknown }).episodes))
      return (whole as { episodes: unknown[] }).episodes;
    return Array.isArray(whole) ? whole : [whole];
  } catch {
    return trimmed.split(/\r?\n/).flatMap((line, i) => {
      if (line.trim() === '') return [];
      try {
        return [JSON.parse(line) as unknown];
      } catch {
        throw new GenerationInputError(`${path}: line ${i + 1} is not JSON`);
      }
    });
  }
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `field "${issue?.path.join('.') ?? ''}" ${issue?.message ?? 'is invalid'}`;
}

type Prepared = { scenarioId: string; cast: [string, string]; mode: Mode; model: string; sampleIndex: number | undefined; turns: NewTurn[]; endReason: string; meta: Record<string, unknown> };

/** Where a record is and how it failed: every refusal names the file and the record. */
type RecordContext = { db: Db; path: string; index: number; fileMode: Mode | null | undefined; options: ImportDialoguesOptions; scenarios: ReturnType<typeof listScenarios>; fail: (message: string) => never };

const IMPORT_FIRST = 'import the Sotopia EnvironmentProfile and AgentProfile files first (simarena scenarios import ENVIRONMENTS.json AGENTS.json)';

/** The record as a Sotopia EpisodeLog, from either of Sotopia's shapes. */
function parseEpisode(record: unknown, shape: NonNullable<ReturnType<typeof episodeShapeOf>>, ctx: RecordContext): EpisodeLog {
  if (shape === 'episodes_to_jsonl') {
    const parsed = episodeJsonlSchema.safeParse(record);
    if (!parsed.success) return ctx.fail(`not a Sotopia episodes_to_jsonl record: ${issueText(parsed.error)}`);
    return episodeFromJsonl(parsed.data);
  }
  const parsed = episodeLogSchema.safeParse(record);
  if (!parsed.success) return ctx.fail(`not a Sotopia EpisodeLog: ${issueText(parsed.error)}`);
  return parsed.data;
}

/** The library's scenario of an episode: named by our slug, by a Sotopia pk kept as an alias, or found by its text. */
function episodeScenario(episode: EpisodeLog, ctx: RecordContext): string {
  // simarena's own Sotopia export names the environment by the scenario's slug; Sotopia by its pk.
  let scenarioId =
    episode.scenario_id ??
    ctx.options.scenarioId ??
    (getScenario(ctx.db, episode.environment) ? episode.environment : undefined) ??
    findScenarioByAlias(ctx.db, episode.environment);
  if (!scenarioId) {
    // Sotopia names its environment by a database pk; find the scenario by its text in the first observation.
    const observation = episodeFirstObservation(episode);
    const matches = ctx.scenarios.filter((s) => observation.includes(s.context));
    if (matches.length === 0) return ctx.fail(`no scenario in the library has the text of environment ${episode.environment}: ${IMPORT_FIRST}, or give --scenario ID`);
    if (matches.length > 1)
      return ctx.fail(`cannot tell which scenario environment ${episode.environment} is (${matches.map((m) => m.id).join(', ')} match its text): give --scenario ID`);
    scenarioId = (matches[0] as { id: string }).id;
  }
  if (!getScenario(ctx.db, scenarioId)) return ctx.fail(`unknown scenario "${scenarioId}": ${IMPORT_FIRST}`);
  return scenarioId;
}

/** The two characters of an episode, in speaking order, and their names as its messages give them. */
function episodeCast(episode: EpisodeLog, scenarioId: string, ctx: RecordContext): { ids: string[]; names: string[] } {
  // Agents by their Sotopia pk (kept as an alias when the profiles were imported) or by our slug (our export).
  const byPk = episode.agents.map((pk) => findCharacterByAlias(ctx.db, pk) ?? (characterExists(ctx.db, pk) ? pk : undefined));
  const pkCharacters = byPk.every((id) => id !== undefined) ? byPk.map((id) => getCharacter(ctx.db, id as string)) : null;
  const names = pkCharacters?.every((c) => c !== undefined) ? pkCharacters.map((c) => fullName(c as NonNullable<typeof c>)) : episodeAgentNames(episode);
  if (names.length !== 2) return ctx.fail(`the episode's messages name ${names.length} agent(s) (${names.join(', ')}), not two`);
  if (names[0] === names[1]) return ctx.fail(`both agents are named "${names[0]}": a dialogue needs two speakers with different names`);
  // A cast of the scenario with these names first; otherwise the two characters of the library with these
  // names, as a new cast (published episodes pair characters with environments in their own way).
  const existing = listCasts(ctx.db, scenarioId).find((c) => {
    const n1 = getCharacter(ctx.db, c.character_1_id);
    const n2 = getCharacter(ctx.db, c.character_2_id);
    return n1 && n2 && fullName(n1) === names[0] && fullName(n2) === names[1];
  });
  const ids = pkCharacters?.every((c) => c !== undefined) ? (byPk as string[]) : existing ? [existing.character_1_id, existing.character_2_id] : names.map((name) => {
    const found = findCharactersByName(ctx.db, name);
    if (found.length === 0) return ctx.fail(`character "${name}" is not in the library: ${IMPORT_FIRST}`);
    if (found.length > 1) return ctx.fail(`${found.length} characters are named "${name}" (${found.map((c) => c.id).join(', ')}): add the pair as a cast of scenario "${scenarioId}" first`);
    return (found[0] as { id: string }).id;
  });
  return { ids, names };
}

/** A Sotopia episode (EpisodeLog or episodes_to_jsonl record) as a dialogue to store. */
function prepareEpisode(record: unknown, shape: NonNullable<ReturnType<typeof episodeShapeOf>>, ctx: RecordContext): Prepared {
  const episode = parseEpisode(record, shape, ctx);
  const mode = episode.mode ? parseMode(episode.mode) : episode.simarena?.mode ? parseMode(episode.simarena.mode) : (ctx.fileMode ?? modeFromTag(episode.tag));
  if (!mode)
    return ctx.fail(`no mode: ${episode.tag ? `the tag ${JSON.stringify(episode.tag)} names none; ` : ''}give --mode (${MODE_CHOICES}) or a "mode" field`);
  const human = humanSide(mode, episode.model ?? ctx.options.model, ctx.options.humanCharacter, ctx.fail);
  const model = human?.model ?? episode.model ?? ctx.options.model ?? episode.models?.[1];
  if (!model) return ctx.fail('no model: give --model or a "model" field');
  const scenarioId = episodeScenario(episode, ctx);
  const { ids, names } = episodeCast(episode, scenarioId, ctx);
  const turns = episodeTurns(episode);
  if (!turns.ok) return ctx.fail(turns.error);
  const stranger = turns.turns.find((t) => t.name !== names[0] && t.name !== names[1]);
  if (stranger) return ctx.fail(`its messages name "${stranger.name}", who is neither ${names[0]} nor ${names[1]} (agents ${episode.agents.join(', ')})`);
  return {
    scenarioId,
    cast: [ids[0] as string, ids[1] as string],
    mode,
    model,
    sampleIndex: undefined,
    turns: turns.turns.map((t) => ({ speaker: t.name === names[0] ? 1 : 2, action: t.action, text: t.text })),
    endReason: turns.turns.at(-1)?.action === 'leave' ? 'left' : 'imported',
    // What Sotopia measured and how, kept so that `dialogues show --json` and the Sotopia export give it back.
    meta: {
      source: 'sotopia',
      format: shape,
      file: basename(ctx.path),
      record: ctx.index + 1,
      episode_pk: episode.pk ?? null,
      environment_pk: episode.environment,
      agent_pks: episode.agents,
      tag: episode.tag ?? null,
      models: episode.models ?? null,
      rewards: episode.rewards ?? null,
      reasoning: episode.reasoning ?? null,
      rewards_prompt: episode.rewards_prompt ?? null,
      ...human?.meta,
    },
  };
}

/** A record of simarena's own dialogue JSONL as a dialogue to store. */
function prepareDialogueRecord(record: unknown, ctx: RecordContext): Prepared {
  const parsed = dialogueRecordSchema.safeParse(record);
  if (!parsed.success) return ctx.fail(`not a simarena dialogue (JSONL export) nor a Sotopia EpisodeLog: ${issueText(parsed.error)}`);
  const r = parsed.data;
  const mode = r.mode ?? ctx.fileMode;
  if (!mode) return ctx.fail(`no mode: give --mode (${MODE_CHOICES}) or a "mode" field`);
  const human = humanSide(mode, r.model ?? ctx.options.model, r.human_character ?? ctx.options.humanCharacter, ctx.fail);
  const model = human?.model ?? r.model ?? ctx.options.model;
  if (!model) return ctx.fail('no model: give --model or a "model" field');
  if (!getScenario(ctx.db, r.scenario_id)) return ctx.fail(`unknown scenario "${r.scenario_id}": import it first (simarena scenarios import)`);
  if (r.cast[0] === r.cast[1]) return ctx.fail(`field "cast" names "${r.cast[0]}" twice: a cast is two different characters`);
  const absent = r.cast.filter((id) => !characterExists(ctx.db, id));
  if (absent.length > 0) return ctx.fail(`character ${absent.map((id) => `"${id}"`).join(', ')} not in the library: import it first (simarena scenarios import)`);
  return {
    scenarioId: r.scenario_id,
    cast: r.cast,
    mode,
    model,
    sampleIndex: r.sample_index,
    turns: r.turns,
    endReason: r.end_reason ?? (r.turns.at(-1)?.action === 'leave' ? 'left' : 'imported'),
    meta: { source: 'simarena', file: basename(ctx.path), record: ctx.index + 1, source_id: r.id ?? null, source_run: r.run ?? null, ...human?.meta },
  };
}

/** The import's run name: --run-name if free, else one made from the time and the file's name. */
function importRunName(db: Db, path: string, options: ImportDialoguesOptions, now: Date): string {
  const stamp = now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  let runName = options.runName ?? `import-${stamp}-${basename(path).replace(/[^A-Za-z0-9._-]+/g, '-')}`.slice(0, 100);
  if (options.runName && runNameTaken(db, runName)) throw new GenerationInputError(`a run named "${runName}" exists: choose another --run-name`);
  for (let n = 2; runNameTaken(db, runName); n++) runName = `${runName}-${n}`;
  return runName;
}

export function importDialogues(db: Db, path: string, records: unknown[], options: ImportDialoguesOptions, now: Date): { runId: number; runName: string; dialogues: number } {
  const fileMode = options.mode === undefined ? undefined : parseMode(options.mode);
  if (options.mode !== undefined && !fileMode) throw new GenerationInputError(`--mode must be ${MODE_CHOICES}, not "${options.mode}"`);
  const scenarios = listScenarios(db);
  const prepared: Prepared[] = records.map((record, index) => {
    const fail = (message: string): never => {
      throw new GenerationInputError(`${path}: record ${index + 1}: ${message}`);
    };
    const ctx: RecordContext = { db, path, index, fileMode, options, scenarios, fail };
    const shape = episodeShapeOf(record);
    return shape ? prepareEpisode(record, shape, ctx) : prepareDialogueRecord(record, ctx);
  });
  if (prepared.length === 0) throw new GenerationInputError(`${path}: no dialogues in the file`);
  const runName = importRunName(db, path, options, now);
  const models = [...new Set(prepared.map((p) => p.model))];
  const modes = [...new Set(prepared.map((p) => p.mode))];

  return db.transaction(() => {
    const runId = insertSimpleRun(db, { name: runName, kind: 'import', state: 'complete', model: models.length === 1 ? models[0] : null, modes, createdBy: options.createdBy }, now);
    const used = new Set<string>();
    for (const p of prepared) {
      const castId = ensureCast(db, p.scenarioId, p.cast[0], p.cast[1]).id;
      let sample = p.sampleIndex ?? 0;
      if (p.sampleIndex === undefined) while (used.has(`${castId}/${p.mode}/${sample}`)) sample++;
      const key = `${castId}/${p.mode}/${sample}`;
      if (used.has(key)) throw new GenerationInputError(`${path}: two dialogues of scenario ${p.scenarioId} in mode ${p.mode} have sample_index ${sample}`);
      used.add(key);
      const id = insertDialogue(
        db,
        { runId, scenarioId: p.scenarioId, castId, sampleIndex: sample, mode: p.mode, model: p.model, origin: 'imported', state: 'complete', endReason: p.endReason, meta: p.meta },
        now,
      );
      replaceTurns(db, id, p.turns);
    }
    return { runId, runName, dialogues: prepared.length };
  })();
}
