import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { type RunEndpoint, listRunEndpoints, runCallTotals } from './call.queries.js';
import { countRunDialogues } from './dialogue.queries.js';
import { isHumanMode, type Mode } from './mode.js';
import { getRun, type RunRow } from './run.queries.js';
import { parseJsonColumn } from '../db/json-column.js';
import { cardSettingsSchema, earlierFailuresSchema, runModesSchema, storedCardSchema } from './run-columns.schema.js';

// The Simulation Card proposed by Zhou et al. (EMNLP 2024, §7 and appendix): how a simulation was set up,
// what each agent knew, with which models and settings, and what it produced. One per run.

export type SimulationCard = {
  card_version: 1;
  run: { id: number; name: string; kind: string; state: string; created_at: string; started_at: string | null; finished_at: string | null };
  simulation_details: {
    setups: { mode: Mode; agents: 'single' | 'multi'; information: string }[];
    agent_type: string;
    modalities: string;
    humans_in_the_loop: string;
    platform: string;
    targeted_domain: string;
    other_features: string;
  };
  /** `base_url`: where the run last sent its calls; `endpoints` below says where each call went. */
  models: { model: string | null; endpoint: string | null; base_url: string | null };
  /** Each base URL the run's calls were sent to (a resumed run may have used several), with its calls and dialogues. */
  endpoints?: RunEndpoint[];
  settings: {
    temperature: number | null;
    max_tokens: number | null;
    max_turns: number | null;
    seed: number | null;
    samples: number;
    concurrency: number;
    response_format: string;
    prompt_version: string | null;
    prompt_hash: string | null;
    min_spoken_turns: number | null;
  };
  scenarios: { id: string; category: string; relationship: string; dialogues: number }[];
  counts: { dialogues: number; complete: number; failed: number; pending: number; by_mode: Record<string, { complete: number; failed: number }> };
  end_reasons: Record<string, number>;
  failures: { dialogue_id: number; scenario_id: string; mode: string; reason: string }[];
  /** Failed dialogues generated again (`generate --resume RUN --retry-failed`): each earlier failure and the outcome. */
  regenerated?: { dialogue_id: number; scenario_id: string; mode: string; generation: number; state: string; earlier_failures: { generation: number; reason: string }[] }[];
  calls: { total: number; ok: number; invalid: number; errors: number; prompt_tokens: number; completion_tokens: number; estimated_cost: number | null };
  /** Automatic evaluations of the run's dialogues (simarena evaluate), as they stand when the card was last written. */
  evaluations?: SimulationCardEvaluation[];
  intended_use: string;
  metrics: string;
  ethical_considerations: string;
  caveats: string;
};

/**
 * runs.simulation_card as served: a card of version 1 with its run, settings and counts. Cards written by earlier
 * versions may lack later fields, so only the parts every version wrote are checked (as before this schema), and
 * the rest is taken as written.
 */
export const storedSimulationCardSchema = z
  .looseObject({ card_version: z.literal(1), run: z.looseObject({}), settings: z.looseObject({}), counts: z.looseObject({}) })
  .transform((card) => card as unknown as SimulationCard);

export type SimulationCardEvaluation = { name: string; judge_model: string; prompt_version: string; prompt_hash: string; temperature: number; state: string; dialogues_scored: number };

/** The run's evaluations (table `evaluations`, owned by src/evaluation/), read here so the card lists them. */
function listCardEvaluations(db: Db, runId: number): SimulationCardEvaluation[] {
  return db
    .prepare<{ runId: number }, SimulationCardEvaluation>(
      `SELECT e.name, e.judge_model, e.prompt_version, e.prompt_hash, e.temperature, e.state,
              (SELECT count(DISTINCT s.dialogue_id) FROM episode_scores s WHERE s.evaluation_id = e.id) AS dialogues_scored
       FROM evaluations e WHERE e.run_id = :runId AND e.kind = 'episode' ORDER BY e.id`,
    )
    .all({ runId });
}

/** Rewrites the evaluations of a run's stored card (a card is written when the run ends; evaluations come later). */
export function refreshSimulationCardEvaluations(db: Db, runId: number): void {
  const stored = db.prepare<{ runId: number }, { simulation_card: string | null }>('SELECT simulation_card FROM runs WHERE id = :runId').get({ runId });
  if (!stored?.simulation_card) return;
  // Only the evaluations are rewritten: the rest of the stored card is kept as it is (an object).
  const card = { ...parseJsonColumn(storedCardSchema, stored.simulation_card, `runs.simulation_card of run ${runId}`), evaluations: listCardEvaluations(db, runId) };
  db.prepare('UPDATE runs SET simulation_card = :card WHERE id = :runId').run({ runId, card: JSON.stringify(card) });
}

const SETUPS: Record<Mode, { agents: 'single' | 'multi'; information: string }> = {
  SCRIPT: {
    agents: 'single',
    information: "one omniscient call writes both characters: it sees the scenario, both full profiles with secrets, and both goals",
  },
  AGENTS: {
    agents: 'multi',
    information:
      "one call per turn per character: the scenario, its own full profile and goal, what the relationship allows of the partner (stranger: nothing; know by name: the name; acquaintance: public profile; friend, romantic, family: all but the secret), the conversation so far; never the partner's goal or secret",
  },
  MINDREADERS: {
    agents: 'multi',
    information: "as AGENTS, but every call also sees the partner's full profile with secret and the partner's goal",
  },
  HUMANS: {
    agents: 'multi',
    information: "two people play the characters live, turn by turn; each sees the scenario, their own character's full profile and goal, and what the relationship allows of the partner, as AGENTS does; never the partner's goal or secret",
  },
  HUMAN_AGENT: {
    agents: 'multi',
    information: 'a person plays one character and an AGENTS-mode model the other, each seeing what AGENTS sees',
  },
  HUMAN_SCRIPT: {
    agents: 'single',
    information: "one person writes both characters, seeing the scenario, both full profiles with secrets and both goals (what SCRIPT's call sees)",
  },
};

export function estimateCost(promptTokens: number, completionTokens: number, pricePrompt: number | null, priceCompletion: number | null): number | null {
  if (pricePrompt === null && priceCompletion === null) return null;
  return ((pricePrompt ?? 0) * promptTokens + (priceCompletion ?? 0) * completionTokens) / 1_000_000;
}

type CardScenario = SimulationCard['scenarios'][number];
type CardFailure = SimulationCard['failures'][number];
type CardRegenerated = NonNullable<SimulationCard['regenerated']>[number];

/** Complete and failed dialogues of each mode the run generated. */
function countDialoguesByMode(db: Db, runId: number): SimulationCard['counts']['by_mode'] {
  const byMode = db
    .prepare<{ runId: number }, { mode: string; complete: number; failed: number }>(
      `SELECT mode, coalesce(sum(state = 'complete'), 0) AS complete, coalesce(sum(state = 'failed'), 0) AS failed
       FROM dialogues WHERE run_id = :runId GROUP BY mode ORDER BY mode`,
    )
    .all({ runId });
  return Object.fromEntries(byMode.map((m) => [m.mode, { complete: m.complete, failed: m.failed }]));
}

/** How the run's complete dialogues ended, with the number of dialogues for each reason. */
function countEndReasons(db: Db, runId: number): SimulationCard['end_reasons'] {
  const endReasons = db
    .prepare<{ runId: number }, { end_reason: string; n: number }>(
      `SELECT end_reason, count(*) AS n FROM dialogues WHERE run_id = :runId AND state = 'complete' AND end_reason IS NOT NULL
       GROUP BY end_reason ORDER BY end_reason`,
    )
    .all({ runId });
  return Object.fromEntries(endReasons.map((r) => [r.end_reason, r.n]));
}

function listCardScenarios(db: Db, runId: number): CardScenario[] {
  return db
    .prepare<{ runId: number }, CardScenario>(
      `SELECT s.id, s.category, s.relationship, count(d.id) AS dialogues
       FROM dialogues d JOIN scenarios s ON s.id = d.scenario_id WHERE d.run_id = :runId GROUP BY s.id ORDER BY s.id`,
    )
    .all({ runId });
}

function listCardFailures(db: Db, runId: number): CardFailure[] {
  return db
    .prepare<{ runId: number }, CardFailure>(
      `SELECT id AS dialogue_id, scenario_id, mode, coalesce(failure_reason, '') AS reason
       FROM dialogues WHERE run_id = :runId AND state = 'failed' ORDER BY id`,
    )
    .all({ runId });
}

/** Dialogues generated again after failing, each with the failures of its earlier generations. */
function listCardRegenerated(db: Db, runId: number): CardRegenerated[] {
  return db
    .prepare<{ runId: number }, { dialogue_id: number; scenario_id: string; mode: string; generation: number; state: string; earlier: string | null }>(
      `SELECT id AS dialogue_id, scenario_id, mode, generation, state, json_extract(meta, '$.earlier_failures') AS earlier
       FROM dialogues WHERE run_id = :runId AND generation > 1 ORDER BY id`,
    )
    .all({ runId })
    .map(({ earlier, ...d }) => ({
      ...d,
      earlier_failures: (earlier ? parseJsonColumn(earlierFailuresSchema, earlier, `dialogues.meta.earlier_failures of dialogue ${d.dialogue_id}`) : []).map((f) => ({
        generation: f.generation,
        reason: f.reason ?? '',
      })),
    }));
}

function cardCalls(db: Db, run: RunRow): SimulationCard['calls'] {
  const calls = runCallTotals(db, run.id);
  return {
    total: calls.calls,
    ok: calls.ok,
    invalid: calls.invalid,
    errors: calls.errors,
    prompt_tokens: calls.prompt_tokens,
    completion_tokens: calls.completion_tokens,
    estimated_cost: estimateCost(calls.prompt_tokens, calls.completion_tokens, run.price_prompt_per_mtok, run.price_completion_per_mtok),
  };
}

function cardSettings(run: RunRow): SimulationCard['settings'] {
  const settings = parseJsonColumn(cardSettingsSchema, run.settings, `runs.settings of run ${run.id}`);
  return {
    temperature: run.temperature,
    max_tokens: run.max_tokens,
    max_turns: run.max_turns,
    seed: run.seed,
    samples: run.samples,
    concurrency: run.concurrency,
    response_format: run.response_format,
    prompt_version: run.prompt_version,
    prompt_hash: settings.promptHash ?? null,
    min_spoken_turns: settings.minSpokenTurns ?? null,
  };
}

/** What the run simulated: one setup per mode, the rest the same for every simarena run. */
function simulationDetails(modes: Mode[]): SimulationCard['simulation_details'] {
  return {
    setups: modes.map((mode) => ({ mode, ...SETUPS[mode] })),
    agent_type: modes.every(isHumanMode) && !modes.includes('HUMAN_AGENT')
      ? 'people (no model)'
      : 'LLM (prompted, no fine-tuning), through an OpenAI-compatible chat completions endpoint',
    modalities: 'text: speech, non-verbal communication, physical actions, leaving',
    humans_in_the_loop: modes.some(isHumanMode) ? 'people play or write the characters of the human modes' : 'none during generation',
    platform: 'simarena (Sotopia-style two-character scenarios)',
    targeted_domain: 'goal-oriented social interaction between two characters',
    other_features: 'character profiles with secrets; relationship-dependent knowledge of the partner; no memory across dialogues',
  };
}

/** The caveats of a run; an imported run gets a first sentence saying its source's prompts may differ. */
function cardCaveats(kind: string): string {
  return (
    (kind === 'generation'
      ? ''
      : `This ${kind} run was not generated by simarena: the setups above say what each mode means here; the source's own prompts and settings may differ. `) +
    'SCRIPT sees both characters\' private information, so its apparent success may come from omniscience (Zhou et al. 2024). Results hold for these models, prompts and scenarios only.'
  );
}

export function buildSimulationCard(db: Db, runId: number): SimulationCard {
  const run = getRun(db, runId);
  if (!run) throw new Error(`no run with id ${runId}`);
  const modes = parseJsonColumn(runModesSchema, run.modes, `runs.modes of run ${runId}`);
  const counts = countRunDialogues(db, runId);
  return {
    card_version: 1,
    run: { id: run.id, name: run.name, kind: run.kind, state: run.state, created_at: run.created_at, started_at: run.started_at, finished_at: run.finished_at },
    simulation_details: simulationDetails(modes),
    models: { model: run.model, endpoint: run.endpoint_name, base_url: run.base_url },
    endpoints: listRunEndpoints(db, runId),
    settings: cardSettings(run),
    scenarios: listCardScenarios(db, runId),
    counts: {
      dialogues: counts.total,
      complete: counts.complete,
      failed: counts.failed,
      pending: counts.pending + counts.running,
      by_mode: countDialoguesByMode(db, runId),
    },
    end_reasons: countEndReasons(db, runId),
    failures: listCardFailures(db, runId),
    regenerated: listCardRegenerated(db, runId),
    calls: cardCalls(db, run),
    evaluations: listCardEvaluations(db, runId),
    intended_use: 'Human evaluation of simulated social interactions: blinded pairwise comparison of modes (naturalness), not training data.',
    metrics: 'Human-likeness (naturalness) by pairwise human judgment; goal completion and information leakage may be analysed from the stored turns.',
    ethical_considerations: 'Model text is untrusted and may be offensive; raters can report content. Characters are fictional.',
    caveats: cardCaveats(run.kind),
  };
}

function table(rows: [string, string][]): string {
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${v.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`)].join('\n');
}

/** Where the calls went: every base URL with its calls and the dialogues it answered (one may have been answered by two). */
function endpointLines(endpoints: RunEndpoint[]): string[] {
  if (endpoints.length === 0) return [];
  return [
    'Endpoints the calls were sent to:',
    '',
    ...endpoints.map(
      (e) => `- ${e.base_url ?? '(address not recorded: calls stored before it was kept)'}: ${e.calls} call(s), ${e.ok} ok, answering ${e.dialogues} dialogue(s)`,
    ),
    '',
  ];
}

function simulationDetailsLines(details: SimulationCard['simulation_details']): string[] {
  return [
    '## Simulation details',
    '',
    ...details.setups.map((m) => `- **${m.mode}** (${m.agents === 'single' ? 'single agent' : 'multi-agent'}): ${m.information}`),
    '',
    table([
      ['agent type', details.agent_type],
      ['modalities', details.modalities],
      ['humans in the loop', details.humans_in_the_loop],
      ['platform', details.platform],
      ['targeted domain', details.targeted_domain],
      ['other features', details.other_features],
    ]),
    '',
  ];
}

function modelsAndSettingsLines(card: SimulationCard): string[] {
  const s = card.settings;
  return [
    '## Models and settings',
    '',
    table([
      ['model', card.models.model ?? ''],
      ['endpoint', `${card.models.endpoint ?? ''} (${card.models.base_url ?? ''})`],
      ['temperature', String(s.temperature ?? '')],
      ['max tokens', String(s.max_tokens ?? 'server default')],
      ['max turns', String(s.max_turns ?? '')],
      ['seed', String(s.seed ?? '')],
      ['samples per scenario and cast', String(s.samples)],
      ['response format', s.response_format],
      ['prompts', `${s.prompt_version ?? ''} (${s.prompt_hash ?? ''})`],
    ]),
    '',
    ...endpointLines(card.endpoints ?? []),
  ];
}

/** Dialogues by state and mode, end reasons, and the calls with their tokens and cost. */
function countsLines(card: SimulationCard): string[] {
  return [
    '## Counts',
    '',
    `${card.counts.dialogues} dialogue(s): ${card.counts.complete} complete, ${card.counts.failed} failed, ${card.counts.pending} not generated.`,
    ...Object.entries(card.counts.by_mode).map(([mode, c]) => `- ${mode}: ${c.complete} complete, ${c.failed} failed`),
    '',
    `End reasons: ${Object.entries(card.end_reasons).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}.`,
    '',
    `Calls: ${card.calls.total} (${card.calls.ok} ok, ${card.calls.invalid} invalid output, ${card.calls.errors} errors); ` +
      `${card.calls.prompt_tokens} prompt and ${card.calls.completion_tokens} completion tokens` +
      (card.calls.estimated_cost === null ? '.' : `; estimated cost ${card.calls.estimated_cost.toFixed(4)}.`),
    '',
  ];
}

/** The failures, then (only when there are any) the dialogues generated again after failing. */
function failuresLines(card: SimulationCard): string[] {
  return [
    '## Failures',
    '',
    ...(card.failures.length === 0 ? ['None.'] : card.failures.map((f) => `- dialogue ${f.dialogue_id} (${f.scenario_id}, ${f.mode}): ${f.reason}`)),
    '',
    ...(!card.regenerated || card.regenerated.length === 0
      ? []
      : [
          '## Generated again after failing',
          '',
          ...card.regenerated.map(
            (r) =>
              `- dialogue ${r.dialogue_id} (${r.scenario_id}, ${r.mode}): generation ${r.generation}, ${r.state}; earlier: ${r.earlier_failures.map((f) => `generation ${f.generation}: ${f.reason}`).join('; ')}`,
          ),
          '',
        ]),
  ];
}

/** The automatic evaluations listed under Metrics; nothing when the run has none. */
function evaluationLines(evaluations: SimulationCardEvaluation[] | undefined): string[] {
  if (!evaluations || evaluations.length === 0) return [];
  return [
    'Automatic evaluations (Sotopia-Eval dimensions scored by a judge model; a model\'s reading, not a human\'s):',
    '',
    ...evaluations.map((e) => `- ${e.name}: judge ${e.judge_model}, prompts ${e.prompt_version} (${e.prompt_hash}), temperature ${e.temperature}, ${e.state}, ${e.dialogues_scored} dialogue(s) scored`),
    '',
  ];
}

export function simulationCardMarkdown(card: SimulationCard): string {
  const lines = [
    `# Simulation card: run ${card.run.name}`,
    '',
    `State: ${card.run.state}. Created ${card.run.created_at}${card.run.finished_at ? `, finished ${card.run.finished_at}` : ''}.`,
    '',
    ...simulationDetailsLines(card.simulation_details),
    ...modelsAndSettingsLines(card),
    '## Scenarios',
    '',
    ...card.scenarios.map((sc) => `- ${sc.id} (${sc.category}, ${sc.relationship}): ${sc.dialogues} dialogue(s)`),
    '',
    ...countsLines(card),
    ...failuresLines(card),
    '## Intended use',
    '',
    card.intended_use,
    '',
    '## Metrics',
    '',
    card.metrics,
    '',
    ...evaluationLines(card.evaluations),
    '## Ethical considerations',
    '',
    card.ethical_considerations,
    '',
    '## Caveats and recommendations',
    '',
    card.caveats,
    '',
  ];
  return lines.join('\n');
}
