import { countWords } from '../generation/dialogue-words.js';
import { characterName } from './dialogue-text.js';
import type { ExportContext } from './export-context.js';
import { type CallRow, listDialogueCalls } from '../generation/call.queries.js';
import { type TurnRow, listTurns } from '../generation/dialogue.queries.js';
import type { CharacterRow } from '../scenarios/scenario.queries.js';
import { type DialogueCast, type ExportDialogueRow, dialogueCallTotals, findDialogueCast, iterateDialogues } from './export.queries.js';
import { jsonLine, writeChunk } from './stream-write.js';
import { liveProvenance } from './live-provenance.js';

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function emptyToNull(value: unknown): unknown {
  return value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0 ? null : value;
}

function jsonList(text: string): string[] {
  const value = parseJson(text);
  return Array.isArray(value) ? value.map(String) : [];
}

function characterRecord(c: CharacterRow) {
  return {
    id: c.id,
    name: characterName(c),
    first_name: c.first_name,
    last_name: c.last_name,
    age: c.age,
    gender: c.gender,
    pronouns: c.pronouns,
    occupation: c.occupation,
    public_info: c.public_info,
    personality_and_values: c.personality_and_values,
    decision_making_style: c.decision_making_style,
    secret: c.secret,
    big_five: c.big_five,
    moral_values: jsonList(c.moral_values),
    schwartz_values: jsonList(c.schwartz_values),
  };
}

/**
 * A call as published, less its request and response, which each reader shows its own way (this export as parsed
 * JSON, GET /api/dialogues/:id as the messages the model saw): one list of fields and names for both.
 */
export function callMetadata(c: CallRow) {
  return {
    id: c.id,
    turn_idx: c.turn_idx,
    speaker: c.speaker,
    attempt: c.attempt,
    status: c.status,
    error: c.error,
    http_status: c.http_status,
    prompt_tokens: c.prompt_tokens,
    completion_tokens: c.completion_tokens,
    latency_ms: c.latency_ms,
    created_at: c.created_at,
  };
}

export type DialogueParts = { row: ExportDialogueRow; cast: DialogueCast; turns: TurnRow[] };

/** A dialogue with everything the formats need, read one at a time. */
export function* iterateDialogueParts(ctx: ExportContext): Generator<DialogueParts> {
  for (const row of iterateDialogues(ctx.db, ctx.scope)) {
    const cast = findDialogueCast(ctx.db, row.cast_id);
    if (!cast) throw new Error(`dialogue ${row.id} has no cast`);
    yield { row, cast, turns: listTurns(ctx.db, row.id) };
  }
}

export function dialogueRecord(ctx: ExportContext, { row, cast, turns }: DialogueParts) {
  const totals = dialogueCallTotals(ctx.db, row.id);
  const names = cast.characters.map(characterName);
  const spoken = turns.filter((t) => t.action === 'speak');
  const words = spoken.reduce((sum, t) => sum + countWords(t.text), 0);
  const record: Record<string, unknown> = {
    dialogue_id: row.id,
    batch_id: ctx.batch.id,
    run_id: row.run_id,
    run_name: row.run_name,
    condition: `${row.mode}:${row.model}`,
    mode: row.mode,
    model: row.model,
    origin: row.origin,
    illustrative: row.illustrative === 1,
    derived_from: row.derived_from,
    state: row.state,
    sample_index: row.sample_index,
    seed: row.seed,
    prompt_version: row.prompt_version,
    end_reason: row.end_reason,
    created_at: row.created_at,
    completed_at: row.completed_at,
    scenario: {
      id: cast.scenario.id,
      title: cast.scenario.title,
      category: cast.scenario.category,
      relationship: cast.scenario.relationship,
      context: cast.scenario.context,
      goals: [cast.scenario.goal_1, cast.scenario.goal_2],
      source: cast.scenario.source,
    },
    characters: cast.characters.map(characterRecord),
    turns: turns.map((t) => ({ idx: t.idx, speaker: t.speaker, character: names[t.speaker - 1] ?? null, action: t.action, text: t.text })),
    metrics: {
      turns: turns.length,
      spoken_turns: spoken.length,
      words,
      words_per_spoken_turn: spoken.length > 0 ? words / spoken.length : null,
      turns_by_speaker: [turns.filter((t) => t.speaker === 1).length, turns.filter((t) => t.speaker === 2).length],
      calls: totals.calls,
      prompt_tokens: totals.prompt_tokens,
      completion_tokens: totals.completion_tokens,
      latency_ms: totals.latency_ms,
    },
    // Null rather than {}: Arrow (and so `datasets`) cannot hold a struct without fields.
    meta: emptyToNull(parseJson(row.meta)),
    // Every record has the key (null for a generated dialogue): a Hugging Face dialogues file keeps one set of fields.
    live: liveProvenance(ctx, row),
  };
  if (ctx.options.withCalls)
    record.calls = listDialogueCalls(ctx.db, row.id).map((c) => ({
      ...callMetadata(c),
      request_hash: c.request_hash,
      request: parseJson(c.request),
      response: parseJson(c.response),
    }));
  return record;
}

export async function writeDialogues(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  let rows = 0;
  for (const parts of iterateDialogueParts(ctx)) {
    await writeChunk(out, jsonLine(dialogueRecord(ctx, parts)));
    rows++;
  }
  return rows;
}
