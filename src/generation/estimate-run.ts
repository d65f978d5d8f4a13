import type { Db } from '../db/connection.js';
import { type CharacterRow, getCharacter } from '../scenarios/scenario.queries.js';
import { agentMessages, scriptMessages } from './build-messages.js';
import type { PlannedDialogue } from './create-run.js';
import { loadPrompts } from './prompts.js';
import { estimateCost } from './simulation-card.js';

// A dry run's estimate. Upper bounds for calls (every AGENTS dialogue runs to max turns) and rough token
// counts (4 characters a token; a turn adds about HISTORY_TOKENS_PER_TURN to later prompts).

const CHARS_PER_TOKEN = 4;
const TURN_TOKENS = 40;
const HISTORY_TOKENS_PER_TURN = 35;

export type RunEstimate = {
  dialogues: number;
  byMode: Record<string, number>;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  cost: number | null;
};

export function estimateRun(
  db: Db,
  planned: PlannedDialogue[],
  settings: { maxTurns: number; promptVersion: string; pricePromptPerMTok: number | null; priceCompletionPerMTok: number | null },
): RunEstimate {
  const prompts = loadPrompts(settings.promptVersion);
  const estimate: RunEstimate = { dialogues: planned.length, byMode: {}, calls: 0, promptTokens: 0, completionTokens: 0, cost: null };
  const characters = new Map<string, CharacterRow | undefined>();
  const character = (id: string) => {
    if (!characters.has(id)) characters.set(id, getCharacter(db, id));
    return characters.get(id);
  };
  for (const d of planned) {
    estimate.byMode[d.mode] = (estimate.byMode[d.mode] ?? 0) + 1;
    const c1 = character(d.cast.character_1_id);
    const c2 = character(d.cast.character_2_id);
    if (!c1 || !c2) continue;
    const cast = { scenario: d.scenario, characters: [c1, c2] as [CharacterRow, CharacterRow] };
    if (d.mode === 'SCRIPT') {
      const chars = scriptMessages(prompts, cast, settings.maxTurns).reduce((n, m) => n + m.content.length, 0);
      estimate.calls += 1;
      estimate.promptTokens += Math.ceil(chars / CHARS_PER_TOKEN);
      estimate.completionTokens += settings.maxTurns * TURN_TOKENS;
    } else {
      const chars = agentMessages(prompts, cast, d.mode, 1, []).reduce((n, m) => n + m.content.length, 0);
      const base = Math.ceil(chars / CHARS_PER_TOKEN);
      for (let t = 0; t < settings.maxTurns; t++) {
        estimate.calls += 1;
        estimate.promptTokens += base + t * HISTORY_TOKENS_PER_TURN;
        estimate.completionTokens += TURN_TOKENS;
      }
    }
  }
  estimate.cost = estimateCost(estimate.promptTokens, estimate.completionTokens, settings.pricePromptPerMTok, settings.priceCompletionPerMTok);
  return estimate;
}
