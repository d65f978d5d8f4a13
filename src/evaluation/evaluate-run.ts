import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import { describeBackground, describeTurn, fullName } from '../generation/build-messages.js';
import { getDialogue, listRunDialogues, listTurns } from '../generation/dialogue.queries.js';
import type { ResolvedEndpoint } from '../generation/endpoints.js';
import type { ChatRequest, LlmClient } from '../generation/llm-client.js';
import { fillTemplate } from '../generation/prompts.js';
import { HEARTBEAT_MS, type RunRow, findRun, runHasLiveWorker } from '../generation/run.queries.js';
import { refreshSimulationCardEvaluations } from '../generation/simulation-card.js';
import { getCast, getCharacter, getScenario, listScenarioFacts } from '../scenarios/scenario.queries.js';
import { BatchApiError } from '../generation/batch-api-client.js';
import { type BatchApiOptions, type JudgeItem, collectViaBatchApi } from './batch-api-run.js';
import { DIMENSIONS, type EpisodeAnswer, episodeResponseFormat, parseEpisodeAnswer } from './episode-output.schema.js';
import { EvaluationInputError } from './evaluation-error.js';
import {
  type EvaluationRow,
  type EvaluationState,
  createEvaluationCallStore,
  deleteEvaluation,
  evaluationCallTotals,
  evaluationNameTaken,
  finishEvaluation,
  getEvaluation,
  insertEvaluation,
  listScoredDialogueIds,
  markEvaluationStarted,
  touchEvaluationHeartbeat,
  saveEpisodeScores,
} from './evaluation.queries.js';
import {
  DEFAULT_EVALUATION_SETTINGS,
  type EvaluationProgress,
  type EvaluationSettings,
  type JudgeEngine,
  type JudgeRetryNotice,
  evaluationWording,
  obtainJudgeAnswer,
} from './judge-call.js';
import { CallStop, type WorkCounters, runPool, startCallRunner } from '../generation/model-call.js';
import { type JudgePromptSet, loadJudgePrompts } from './judge-prompts.js';
import { parseJsonColumn } from '../db/json-column.js';
import { storedEvaluationSettingsSchema } from './evaluation-settings.schema.js';

export type EvaluateOptions = {
  llm: LlmClient;
  clock?: Clock;
  /** Aborting pauses the evaluation; `--resume` continues it. */
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
  onRetry?: (notice: JudgeRetryNotice) => void;
  random?: () => number;
  backoff?: { baseMs: number; maxMs: number };
  apiKeyEnv?: string;
  /** Deletes the evaluation when the endpoint does not know the judge model and nothing was scored (a fresh start). */
  discardOnUnknownModel?: boolean;
  /** Ask through the OpenAI Batch API first (see batch-api-run.ts). */
  batchApi?: BatchApiOptions;
};

export type EvaluationOutcome = { evaluationId: number; state: EvaluationState | 'discarded'; error: string | null; total: number; scored: number; failed: number };

/** A run's complete dialogues, in id order. */
export function completeDialogueIds(db: Db, runId: number): number[] {
  return listRunDialogues(db, runId)
    .filter((d) => d.state === 'complete')
    .map((d) => d.id);
}

/** The run to evaluate, by id or name; fails with one line when it is unknown or has no complete dialogue. */
export function findRunToEvaluate(db: Db, idOrName: string): { run: RunRow; dialogueIds: number[] } {
  const run = findRun(db, idOrName);
  if (!run) throw new EvaluationInputError(`no run "${idOrName}": see simarena runs list`);
  const dialogueIds = completeDialogueIds(db, run.id);
  if (dialogueIds.length === 0) throw new EvaluationInputError(`run "${run.name}" has no complete dialogue to evaluate`);
  return { run, dialogueIds };
}

export type NewEpisodeEvaluation = {
  run: string;
  judgeModel: string;
  endpoint: ResolvedEndpoint;
  temperature?: number;
  promptVersion?: string;
  settings?: Partial<EvaluationSettings>;
  name?: string;
  createdBy: string;
};

function defaultName(prefix: string, model: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-');
  return `${prefix}-${stamp}-${model.replace(/[^A-Za-z0-9._-]+/g, '-')}`.slice(0, 120);
}

/** A unique name: the given one (which must be free) or a generated one with a counter when needed. */
export function chooseEvaluationName(db: Db, given: string | undefined, prefix: string, model: string, now: Date): string {
  if (given !== undefined) {
    if (evaluationNameTaken(db, given)) throw new EvaluationInputError(`an evaluation named "${given}" already exists`);
    return given;
  }
  const base = defaultName(prefix, model, now);
  let name = base;
  for (let i = 2; evaluationNameTaken(db, name); i++) name = `${base}-${i}`;
  return name;
}

export function createEpisodeEvaluation(db: Db, input: NewEpisodeEvaluation, now: Date): number {
  const { run } = findRunToEvaluate(db, input.run);
  const prompts = loadJudgePrompts(input.promptVersion);
  return insertEvaluation(
    db,
    {
      name: chooseEvaluationName(db, input.name, 'eval', input.judgeModel, now),
      kind: 'episode',
      runId: run.id,
      batchId: null,
      judgeModel: input.judgeModel,
      endpointName: input.endpoint.name,
      baseUrl: input.endpoint.baseUrl,
      // The paper's GPT-4 judge ran at temperature 0 (Zhou et al. 2024, §4).
      temperature: input.temperature ?? 0,
      promptVersion: prompts.version,
      promptHash: prompts.hash,
      settings: { ...DEFAULT_EVALUATION_SETTINGS, ...input.settings },
      createdBy: input.createdBy,
    },
    now,
  );
}

/** The judge's request for one dialogue; deterministic, so that a resumed evaluation finds its stored answer. */
export function episodeRequest(db: Db, prompts: JudgePromptSet, evaluation: Pick<EvaluationRow, 'judge_model' | 'temperature'>, settings: EvaluationSettings, dialogueId: number): { request: ChatRequest; withDeal: boolean } {
  const dialogue = getDialogue(db, dialogueId);
  const scenario = dialogue && getScenario(db, dialogue.scenario_id);
  const cast = dialogue && getCast(db, dialogue.cast_id);
  const c1 = cast && getCharacter(db, cast.character_1_id);
  const c2 = cast && getCharacter(db, cast.character_2_id);
  if (!dialogue || !scenario || !c1 || !c2) throw new Error(`dialogue ${dialogueId}: its scenario or characters are no longer in the library`);
  const withDeal = listScenarioFacts(db, scenario.id).some((f) => f.kind === 'target_price');
  const names: [string, string] = [fullName(c1), fullName(c2)];
  // Sotopia's evaluator leaves out the turns in which a character did nothing.
  const lines = listTurns(db, dialogueId)
    .filter((t) => t.action !== 'none')
    .map((t) => describeTurn(t.idx, names[t.speaker - 1] ?? '', t));
  const content = fillTemplate(prompts.templates.episode, {
    scenario: scenario.context,
    relationship: scenario.relationship.replace(/_/g, ' '),
    name_1: names[0],
    name_2: names[1],
    background_1: describeBackground(c1, 'full'),
    background_2: describeBackground(c2, 'full'),
    goal_1: scenario.goal_1,
    goal_2: scenario.goal_2,
    dialogue: lines.length > 0 ? lines.join('\n') : '(no turns)',
    deal_instructions: withDeal ? prompts.templates.deal : '',
  });
  return {
    request: {
      model: evaluation.judge_model,
      messages: [{ role: 'user', content }],
      temperature: evaluation.temperature,
      response_format: episodeResponseFormat(settings.responseFormat, withDeal),
    },
    withDeal,
  };
}

export function parseEvaluationSettings(evaluation: EvaluationRow): EvaluationSettings {
  return { ...DEFAULT_EVALUATION_SETTINGS, ...parseJsonColumn(storedEvaluationSettingsSchema, evaluation.settings, `evaluations.settings of evaluation ${evaluation.id}`) };
}

/** The prompts an evaluation was started with; a resume with changed files would send other requests. */
export function loadEvaluationPrompts(evaluation: EvaluationRow): JudgePromptSet {
  const prompts = loadJudgePrompts(evaluation.prompt_version);
  if (prompts.hash !== evaluation.prompt_hash)
    throw new EvaluationInputError(
      `the judge prompt files of ${prompts.version} changed since evaluation "${evaluation.name}" started; restore them or start a new evaluation`,
    );
  return prompts;
}

/** Shared by episode evaluations and the LLM judge: the runner, counters and progress. */
export function startEngine(
  db: Db,
  evaluation: EvaluationRow,
  options: EvaluateOptions,
  total: number,
  doneBefore: number,
  resumeHint: string,
): { engine: JudgeEngine; stopAll: AbortController; counters: WorkCounters; detach: () => void } {
  const settings = parseEvaluationSettings(evaluation);
  const totals = evaluationCallTotals(db, evaluation.id);
  const counters = { done: doneBefore, failed: 0, finishedThisSession: 0 };
  const { runner, stopAll, detach } = startCallRunner({
    llm: options.llm,
    clock: options.clock ?? (() => new Date()),
    random: options.random,
    backoff: options.backoff,
    signal: options.signal,
    limits: settings,
    wording: evaluationWording(evaluation, options.llm.baseUrl, options.apiKeyEnv ?? 'OPENAI_API_KEY', resumeHint),
    concurrency: settings.concurrency,
    totals: { calls: totals.calls, promptTokens: totals.prompt_tokens, completionTokens: totals.completion_tokens },
    total,
    counters,
    onProgress: options.onProgress && ((progress) => options.onProgress?.({ evaluationId: evaluation.id, ...progress })),
  });
  const engine: JudgeEngine = { runner, calls: createEvaluationCallStore(db), evaluation, settings, onRetry: options.onRetry ?? (() => {}) };
  return { engine, stopAll, counters, detach };
}

/** Ends an evaluation: its state from how the pool ended; a fresh start on an unknown model leaves nothing behind. */
export function closeEvaluation(
  db: Db,
  evaluation: EvaluationRow,
  options: EvaluateOptions,
  outcome: { stopError: string | null; unknownModel: boolean; answered: number; paused: boolean },
): EvaluationState | 'discarded' {
  const clock = options.clock ?? (() => new Date());
  if (outcome.unknownModel && options.discardOnUnknownModel && outcome.answered === 0) {
    deleteEvaluation(db, evaluation.id);
    return 'discarded';
  }
  const state: EvaluationState = outcome.stopError ? 'failed' : outcome.paused ? 'paused' : 'complete';
  finishEvaluation(db, evaluation.id, state, outcome.stopError, clock());
  return state;
}

/**
 * Asks the judge every item not yet answered: through the Batch API first when asked to (what it leaves unanswered
 * then goes to ordinary calls), else by ordinary calls with `concurrency` at a time. Ends the evaluation.
 */
export async function runJudgeItems<T>(
  db: Db,
  evaluation: EvaluationRow,
  options: EvaluateOptions,
  work: { items: JudgeItem<T>[]; answered: () => Set<string>; resumeHint: string },
): Promise<{ state: EvaluationState | 'discarded'; error: string | null; failed: number; answered: number }> {
  const clock = options.clock ?? (() => new Date());
  const current = getEvaluation(db, evaluation.id) ?? evaluation;
  if (runHasLiveWorker(current, clock()))
    throw new EvaluationInputError(`evaluation "${evaluation.name}" is being run by process ${current.worker_pid}; wait for it or stop that process`);
  markEvaluationStarted(db, evaluation.id, process.pid, clock(), options.llm.baseUrl);
  // The heartbeat tells other processes this evaluation is alive, even while every call waits on a slow server.
  const beat = setInterval(() => touchEvaluationHeartbeat(db, evaluation.id, clock()), HEARTBEAT_MS);
  beat.unref();
  const total = work.items.length;
  const pending = () => {
    const done = work.answered();
    return work.items.filter((i) => !done.has(i.item));
  };
  const { engine, stopAll, counters, detach } = startEngine(db, evaluation, options, total, total - pending().length, work.resumeHint);
  let stop: CallStop | null = null;
  let paused = false;
  try {
    engine.runner.progress();
    if (options.batchApi) {
      try {
        paused = (await collectViaBatchApi(db, engine, pending(), options.batchApi)) === 'paused';
      } catch (error) {
        if (!(error instanceof BatchApiError)) throw error;
        stop = new CallStop(`${error.message}; ${work.resumeHint}`);
      }
      counters.done = total - pending().length;
      engine.runner.progress();
    }
    if (!paused && !stop) {
      const result = await runPool(
        pending(),
        engine.settings.concurrency,
        stopAll,
        async (job) => {
          const { value, callId } = await obtainJudgeAnswer(engine, job.item, job.request(), job.parse);
          job.save(value, callId);
          return 'done';
        },
        counters,
        () => {},
        engine.runner.progress,
      );
      stop = result.stop;
      paused = !stop && (options.signal?.aborted ?? false);
    }
  } finally {
    detach();
    clearInterval(beat);
  }
  const answered = work.answered().size;
  const state = closeEvaluation(db, evaluation, options, { stopError: stop?.message ?? null, unknownModel: stop?.unknownModel ?? false, answered, paused });
  return { state, error: stop?.message ?? null, failed: counters.failed, answered };
}

/** Scores every complete dialogue of the evaluation's run not yet scored. Safe to call again: it resumes. */
export async function executeEpisodeEvaluation(db: Db, evaluationId: number, options: EvaluateOptions): Promise<EvaluationOutcome> {
  const evaluation = getEvaluation(db, evaluationId);
  if (!evaluation || evaluation.kind !== 'episode' || evaluation.run_id === null) throw new EvaluationInputError(`no episode evaluation with id ${evaluationId}`);
  const prompts = loadEvaluationPrompts(evaluation);
  const settings = parseEvaluationSettings(evaluation);
  const all = completeDialogueIds(db, evaluation.run_id);
  const items: JudgeItem<EpisodeAnswer>[] = all.map((dialogueId) => {
    let built: ReturnType<typeof episodeRequest> | null = null;
    const build = () => (built ??= episodeRequest(db, prompts, evaluation, settings, dialogueId));
    return {
      item: `dialogue:${dialogueId}`,
      request: () => build().request,
      parse: (c) => parseEpisodeAnswer(c, build().withDeal),
      save: (value, callId) => {
        const scores = ([1, 2] as const).flatMap((speaker) =>
          DIMENSIONS.map((dimension) => {
            const answer = value.agents[speaker - 1]?.[dimension] ?? { score: 0, reasoning: '' };
            return { speaker, dimension, score: answer.score, reasoning: answer.reasoning };
          }),
        );
        saveEpisodeScores(db, evaluationId, dialogueId, callId, scores, value.deal);
      },
    };
  });
  const result = await runJudgeItems(db, evaluation, options, {
    items,
    answered: () => new Set([...listScoredDialogueIds(db, evaluationId)].map((id) => `dialogue:${id}`)),
    resumeHint: `then resume with: simarena evaluate --resume ${evaluation.name}`,
  });
  if (result.state !== 'discarded') refreshSimulationCardEvaluations(db, evaluation.run_id);
  return { evaluationId, state: result.state, error: result.error, total: all.length, scored: result.answered, failed: result.failed };
}
