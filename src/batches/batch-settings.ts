import { parseJsonColumn } from '../db/json-column.js';
import type { BatchRow } from './batch.queries.js';
import { type BatchSettings, batchSettingsSchema } from './batch.schema.js';

// Parsed settings by their stored text. Every rater request reads its batch's settings (issue 12: the hot path), and
// the text changes only when a researcher edits the batch; the parse is a pure function of the text, so a small
// memo is safe to share across the process and across databases. Bounded: the oldest entry goes first.
const MAX_ENTRIES = 64;
const parsed = new Map<string, BatchSettings>();

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * A batch's settings, read through their zod schema: a stored value of the wrong shape is a JsonColumnError naming
 * the batch (one clear line in the CLI and the console) instead of a stack trace. The result is shared between
 * callers, so it is frozen: copy it (`{ ...settings }`) to change anything.
 */
export function readBatchSettings(row: Pick<BatchRow, 'id' | 'settings'>): BatchSettings {
  const known = parsed.get(row.settings);
  if (known) return known;
  const settings = deepFreeze(parseJsonColumn(batchSettingsSchema, row.settings, `batches.settings of batch ${row.id}`));
  if (parsed.size >= MAX_ENTRIES) parsed.delete(parsed.keys().next().value as string);
  parsed.set(row.settings, settings);
  return settings;
}
