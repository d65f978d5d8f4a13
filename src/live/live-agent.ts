import type { Clock } from '../clock.js';
import type { Db } from '../db/connection.js';
import type { FallbackSettings } from '../batches/batch.schema.js';
import { type Cast, fullName, agentMessages } from '../generation/build-messages.js';
import { createCallStore } from '../generation/call.queries.js';
import type { LlmClient } from '../generation/llm-client.js';
import { type CallRunner, type StopWording, obtainAnswer } from '../generation/model-call.js';
import { agentResponseFormat, parseAgentTurn } from '../generation/model-output.schema.js';
import { loadPrompts, type PromptSet } from '../generation/prompts.js';
import { type CharacterRow, getCast, getCharacter, getScenario } from '../scenarios/scenario.queries.js';
import type { LiveTurn } from './live.queries.js';
import type { Action } from '../generation/mode.js';

// The agent side of a HUMAN_AGENT dialogue: each of its turns is one AGENTS-mode call for its character (what an
// AGENTS run's call sees: its own side, the partner as the relationship allows, the conversation so far), made through
// the one model-call runner of generation/ (src/generation/model-call.ts) and stored in llm_calls with the dialogue and
// turn it belongs to, before its answer is used. After a restart the same turn's request is the same, so the stored
// answer is reused and nothing is paid twice.

export type AgentTurn = { action: Action; text: string; callId: number };

export type AgentPlayer = {
  /** The agent's turn `idx` as character `speaker`, from the turns so far; throws when no answer can be had. */
  takeTurn(place: { runId: number; dialogueId: number; scenarioId: string; castId: number; speaker: 1 | 2; idx: number }, history: LiveTurn[], fallback: FallbackSettings): Promise<AgentTurn>;
  /** Stops every call in flight (the server is shutting down); their turns are taken again after the restart. */
  stop(): void;
};

export type AgentDeps = {
  db: Db;
  clock: Clock;
  /** The client of the fallback's endpoint (src/generation/endpoints.ts resolves it from the configuration). */
  llmFor: (fallback: FallbackSettings) => LlmClient;
  prompts?: PromptSet;
  /** Per call; the turn's own time bounds it anyway. */
  timeoutMs?: number;
  random?: () => number;
};

function wordingFor(fallback: FallbackSettings, baseUrl: string): StopWording {
  const where = `the endpoint "${fallback.endpoint}" at ${baseUrl}`;
  return {
    where,
    apiKeyEnv: 'the API key of that endpoint',
    resumeHint: 'the participant is told their partner left',
    unknownModel: `does not know model "${fallback.model}" (partner.fallback.model)`,
    checkAddress: { noChatApi: 'the endpoint\'s baseUrl', unreachable: 'the endpoint\'s baseUrl' },
    badFormat: 'the endpoint does not take json_schema answers',
    timeoutAdvice: '; ',
    output: 'model output',
  };
}

function castOf(db: Db, scenarioId: string, castId: number): Cast {
  const scenario = getScenario(db, scenarioId);
  const cast = getCast(db, castId);
  const c1 = cast ? getCharacter(db, cast.character_1_id) : undefined;
  const c2 = cast ? getCharacter(db, cast.character_2_id) : undefined;
  if (!scenario || !c1 || !c2) throw new Error('the scenario or its characters are no longer in the library');
  return { scenario, characters: [c1, c2] as [CharacterRow, CharacterRow] };
}

export function createAgentPlayer(deps: AgentDeps): AgentPlayer {
  const prompts = deps.prompts ?? loadPrompts();
  const calls = createCallStore(deps.db);
  const stopAll = new AbortController();
  const stats = { inFlight: 0, calls: 0, promptTokens: 0, completionTokens: 0 };
  return {
    async takeTurn(place, history, fallback) {
      const cast = castOf(deps.db, place.scenarioId, place.castId);
      const llm = deps.llmFor(fallback);
      const runner: CallRunner = {
        llm,
        clock: deps.clock,
        random: deps.random ?? Math.random,
        backoff: { baseMs: 500, maxMs: 4_000 },
        signal: stopAll.signal,
        limits: { timeoutMs: deps.timeoutMs ?? 30_000, maxRetries: 2, maxInvalidRetries: 2 },
        wording: wordingFor(fallback, llm.baseUrl),
        stats,
        progress: () => {},
      };
      const messages = agentMessages(prompts, cast, 'AGENTS', place.speaker, history);
      const request = { model: fallback.model, messages, temperature: fallback.temperature, response_format: agentResponseFormat('json_schema') };
      const name = fullName(cast.characters[place.speaker - 1] as CharacterRow);
      const { value, callId } = await obtainAnswer(runner, {
        request,
        parse: (content) => parseAgentTurn(content, place.speaker, name),
        ledger: calls.ledgerAt({ runId: place.runId, dialogueId: place.dialogueId, turnIdx: place.idx, speaker: place.speaker, generation: 1 }),
        reseed: { generation: 1 },
      });
      return { action: value.action, text: value.text, callId };
    },
    stop: () => stopAll.abort('stop'),
  };
}
