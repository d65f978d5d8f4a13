import { z } from 'zod';
import type { Action } from './mode.js';

// Sotopia's EpisodeLog (github.com/sotopia-lab/sotopia, sotopia/database/logs.py): messages is a list of
// steps, each a list of (sender, receiver, text). Agents' actions are sent to "Environment" in the wording
// of AgentAction.to_natural_language: 'said: "..."', '[non-verbal communication] ...', '[action] ...',
// 'did nothing', 'left the conversation'.

export const episodeLogSchema = z.looseObject({
  pk: z.string().optional(),
  environment: z.string(),
  agents: z.array(z.string()).length(2, 'must name two agents'),
  tag: z.string().nullable().optional(),
  models: z.array(z.string()).nullable().optional(),
  messages: z.array(z.array(z.tuple([z.string(), z.string(), z.string()]))).min(1, 'has no messages'),
  // Not Sotopia's: simarena accepts these per record.
  mode: z.string().optional(),
  model: z.string().optional(),
  scenario_id: z.string().optional(),
  // Written by simarena's Sotopia export (src/export/sotopia-export.ts).
  simarena: z.looseObject({ mode: z.string().optional() }).optional(),
});
export type EpisodeLog = z.infer<typeof episodeLogSchema>;

export type EpisodeTurn = { name: string; action: Action; text: string };

export function parseSotopiaAction(text: string): { action: Action; text: string } | null {
  const t = text.trim();
  const said = /^said:\s*"([\s\S]*)"$/.exec(t);
  if (said) return { action: 'speak', text: said[1] ?? '' };
  const nonVerbal = /^\[non-verbal communication\]\s*([\s\S]*)$/.exec(t);
  if (nonVerbal) return { action: 'non-verbal', text: nonVerbal[1] ?? '' };
  const action = /^\[action\]\s*([\s\S]*)$/.exec(t);
  if (action) return { action: 'action', text: action[1] ?? '' };
  if (t === 'did nothing') return { action: 'none', text: '' };
  if (t === 'left the conversation') return { action: 'leave', text: '' };
  return null;
}

/** The agents' names in Sotopia's order (the receivers of the first environment messages). */
export function episodeAgentNames(episode: EpisodeLog): string[] {
  const names: string[] = [];
  for (const step of episode.messages)
    for (const [sender, receiver] of step) {
      const name = sender === 'Environment' ? receiver : receiver === 'Environment' ? sender : null;
      if (name && name !== 'Environment' && !names.includes(name)) names.push(name);
    }
  return names;
}

/** The first observation an agent received (it holds the scenario text). */
export function episodeFirstObservation(episode: EpisodeLog): string {
  return episode.messages[0]?.find(([sender]) => sender === 'Environment')?.[2] ?? '';
}

/**
 * The turns of an episode. In Sotopia's round-robin, the agent whose turn it is not "did nothing" in every
 * step; those filler entries are dropped, and a step in which nobody acted becomes one "none" turn.
 */
export function episodeTurns(episode: EpisodeLog): { ok: true; turns: EpisodeTurn[] } | { ok: false; error: string } {
  const turns: EpisodeTurn[] = [];
  for (const [stepIdx, step] of episode.messages.entries()) {
    const actions: EpisodeTurn[] = [];
    for (const [sender, receiver, text] of step) {
      if (sender === 'Environment' || receiver !== 'Environment') continue;
      const parsed = parseSotopiaAction(text);
      if (!parsed) return { ok: false, error: `step ${stepIdx}: cannot read the action of ${sender}: ${text.slice(0, 80)}` };
      actions.push({ name: sender, ...parsed });
    }
    if (actions.length === 0) continue;
    const acted = actions.filter((a) => a.action !== 'none');
    turns.push(...(acted.length > 0 ? acted : [actions[0] as EpisodeTurn]));
    if (acted.some((a) => a.action === 'leave')) break;
  }
  return turns.length > 0 ? { ok: true, turns } : { ok: false, error: 'the episode has no agent actions' };
}
