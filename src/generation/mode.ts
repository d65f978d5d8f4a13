export const MODES = ['SCRIPT', 'AGENTS', 'MINDREADERS'] as const;
export type Mode = (typeof MODES)[number];

export const ACTIONS = ['speak', 'non-verbal', 'action', 'none', 'leave'] as const;
export type Action = (typeof ACTIONS)[number];

/** Accepts a mode in any letter case (CLI flags); returns null for anything else. */
export function parseMode(value: string): Mode | null {
  const upper = value.trim().toUpperCase();
  return (MODES as readonly string[]).includes(upper) ? (upper as Mode) : null;
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
