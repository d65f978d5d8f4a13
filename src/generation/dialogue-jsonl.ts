import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { slugSchema } from '../scenarios/scenario.schema.js';
import { getCast } from '../scenarios/scenario.queries.js';
import { getDialogue, listTurns } from './dialogue.queries.js';
import { ACTIONS, type Action, MODES, type Mode } from './mode.js';
import { getRun } from './run.queries.js';

// simarena's dialogue JSONL: one dialogue per line, read by `dialogues import` (which also reads the richer
// record of `simarena export --format dialogues`).

export const dialogueTurnSchema = z.strictObject({
  speaker: z.union([z.literal(1), z.literal(2)]),
  action: z.enum(ACTIONS),
  text: z.string().max(20_000).default(''),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `simarena export --format dialogues` (src/export/dialogues-export.ts) writes a record for readers: `dialogue_id`,
 * `run_name`, a `scenario` object, two `characters` and turns with `idx` and `character`. Mapped onto this
 * shape, so that an exported file imports as it is.
 */
function fromExportShape(value: unknown): unknown {
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = { ...value };
  if (out.scenario_id === undefined && isObject(value.scenario)) out.scenario_id = value.scenario.id;
  if (out.cast === undefined && Array.isArray(value.characters)) out.cast = value.characters.map((c) => (isObject(c) ? c.id : c));
  if (out.id === undefined && value.dialogue_id !== undefined) out.id = value.dialogue_id;
  if (out.run === undefined && value.run_name !== undefined) out.run = value.run_name;
  if (Array.isArray(value.turns))
    out.turns = value.turns.map((t) => {
      if (!isObject(t)) return t;
      const { idx: _idx, character: _character, ...turn } = t;
      return turn;
    });
  return out;
}

export const dialogueRecordSchema = z.preprocess(fromExportShape, z.looseObject({
  id: z.number().int().optional(),
  run: z.string().optional(),
  scenario_id: slugSchema,
  cast: z.tuple([slugSchema, slugSchema]),
  sample_index: z.number().int().min(0).optional(),
  mode: z
    .string()
    .transform((m) => m.toUpperCase())
    .pipe(z.enum(MODES))
    .optional(),
  model: z.string().min(1).optional(),
  // HUMAN_AGENT: the character the person played (the model played the other).
  human_character: z.union([z.literal(1), z.literal(2)]).optional(),
  turns: z.array(dialogueTurnSchema).min(1, 'a dialogue needs at least one turn'),
  end_reason: z.string().nullable().optional(),
  prompt_version: z.string().nullable().optional(),
  seed: z.number().int().nullable().optional(),
}));
export type DialogueRecord = z.output<typeof dialogueRecordSchema>;

export type DialogueJsonl = {
  id: number;
  run: string;
  scenario_id: string;
  cast: [string, string];
  sample_index: number;
  mode: Mode;
  model: string;
  origin: string;
  illustrative: boolean;
  prompt_version: string | null;
  seed: number | null;
  end_reason: string | null;
  /** HUMAN_AGENT only: the character the person played. */
  human_character?: 1 | 2;
  turns: { speaker: 1 | 2; action: Action; text: string }[];
};

/** One dialogue in the JSONL shape (exports write one per line). */
export function dialogueToJsonl(db: Db, dialogueId: number): DialogueJsonl {
  const d = getDialogue(db, dialogueId);
  if (!d) throw new Error(`no dialogue ${dialogueId}`);
  const cast = getCast(db, d.cast_id);
  return {
    id: d.id,
    run: getRun(db, d.run_id)?.name ?? '',
    scenario_id: d.scenario_id,
    cast: [cast?.character_1_id ?? '', cast?.character_2_id ?? ''],
    sample_index: d.sample_index,
    mode: d.mode,
    model: d.model,
    origin: d.origin,
    illustrative: d.illustrative === 1,
    prompt_version: d.prompt_version,
    seed: d.seed,
    end_reason: d.end_reason,
    ...humanCharacterOf(d.mode, d.meta),
    turns: listTurns(db, d.id).map((t) => ({ speaker: t.speaker, action: t.action, text: t.text })),
  };
}

/** The character a person played in a HUMAN_AGENT dialogue, as its meta records it (`human_character`). */
function humanCharacterOf(mode: Mode, meta: string): { human_character?: 1 | 2 } {
  if (mode !== 'HUMAN_AGENT') return {};
  const parsed = z.object({ human_character: z.union([z.literal(1), z.literal(2)]) }).safeParse(safeJson(meta));
  return parsed.success ? { human_character: parsed.data.human_character } : {};
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
