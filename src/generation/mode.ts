/** The modes a model generates: `simarena generate` runs them (src/generation/execute-run.ts). */
export const GENERATED_MODES = ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const;
export type GeneratedMode = (typeof GENERATED_MODES)[number];

/**
 * The modes with people in them (issues 52, 53): HUMANS, two people role-playing a scenario live, each knowing only
 * their own side; HUMAN_AGENT, a person and an AGENTS-mode model (the dialogue's model is the agent's); HUMAN_SCRIPT, a
 * person who writes the whole conversation knowing both sides, as SCRIPT's model does. Collected by role-play and
 * writing batches, or imported; never generated.
 */
export const HUMAN_MODES = ['HUMANS', 'HUMAN_AGENT', 'HUMAN_SCRIPT'] as const;
export type HumanMode = (typeof HUMAN_MODES)[number];

export const MODES = [...GENERATED_MODES, ...HUMAN_MODES] as const;
export type Mode = (typeof MODES)[number];

/** The model of a dialogue no model wrote (HUMANS, HUMAN_SCRIPT): conditions `HUMANS:human`, `HUMAN_SCRIPT:human`. */
export const HUMAN_MODEL = 'human';

export const ACTIONS = ['speak', 'non-verbal', 'action', 'none', 'leave'] as const;
export type Action = (typeof ACTIONS)[number];

/** Accepts a mode in any letter case (CLI flags); returns null for anything else. */
export function parseMode(value: string): Mode | null {
  const upper = value.trim().toUpperCase();
  return (MODES as readonly string[]).includes(upper) ? (upper as Mode) : null;
}

export function isGeneratedMode(mode: Mode): mode is GeneratedMode {
  return (GENERATED_MODES as readonly string[]).includes(mode);
}

export function isHumanMode(mode: Mode): mode is HumanMode {
  return (HUMAN_MODES as readonly string[]).includes(mode);
}

/**
 * What the writer of each turn knew (the paper's axis, PUBLISHED-SETUP.md): `omniscient` when whoever wrote a turn
 * saw both characters' goals and secrets (SCRIPT, MINDREADERS, HUMAN_SCRIPT); `own-side` when each side saw only its
 * own (AGENTS, HUMANS, HUMAN_AGENT).
 */
export function writerKnowledge(mode: Mode): 'omniscient' | 'own-side' {
  return mode === 'SCRIPT' || mode === 'MINDREADERS' || mode === 'HUMAN_SCRIPT' ? 'omniscient' : 'own-side';
}

/** Whether one writer wrote both sides (SCRIPT, HUMAN_SCRIPT), or each character was played apart. */
export function singleWriter(mode: Mode): boolean {
  return mode === 'SCRIPT' || mode === 'HUMAN_SCRIPT';
}

/** A condition is a mode and a model, written MODE:model and split at the first colon. */
export type Condition = { mode: Mode; model: string };

export function parseCondition(text: string): Condition | null {
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  const mode = parseMode(text.slice(0, colon));
  const model = text.slice(colon + 1).trim();
  return mode && model ? { mode, model } : null;
}

export function formatCondition(condition: Condition): string {
  return `${condition.mode}:${condition.model}`;
}
