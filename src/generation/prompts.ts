import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

// Prompts are versioned files (src/generation/prompts/vN/*.md), read at run time, so that what each
// call saw can be traced to a file in the repository; the version is stored with every run and dialogue.

export const DEFAULT_PROMPT_VERSION = 'v1';
const PROMPT_NAMES = ['agent', 'script'] as const;
export type PromptName = (typeof PROMPT_NAMES)[number];
export type PromptSet = { version: string; hash: string; templates: Record<PromptName, string> };

export const promptsDir = new URL('./prompts/', import.meta.url).pathname;

export function loadPrompts(version: string = DEFAULT_PROMPT_VERSION, dir: string = promptsDir): PromptSet {
  if (!/^v\d+$/.test(version)) throw new Error(`prompt version must look like v1, not "${version}"`);
  const hash = createHash('sha256');
  const templates = {} as Record<PromptName, string>;
  for (const name of PROMPT_NAMES) {
    const text = readFileSync(`${dir}${version}/${name}.md`, 'utf8');
    templates[name] = text.trimEnd();
    hash.update(name).update('\u0000').update(text);
  }
  return { version, hash: hash.digest('hex').slice(0, 16), templates };
}

/** Fills {{placeholders}} in one pass (inserted text is never rescanned); a missing value is a bug, not a blank. */
export function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{([a-z0-9_]+)\}\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`prompt placeholder {{${key}}} has no value`);
    return String(value);
  });
}
