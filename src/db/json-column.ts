import type { z } from 'zod';
import { UserFacingError } from '../errors/user-facing-error.js';

/**
 * A JSON column whose stored text does not match what the code expects (damaged, or written by another version): the
 * server's trouble (500), but said plainly, naming the column and the row, so the operator knows what to repair.
 */
export class JsonColumnError extends UserFacingError {
  constructor(message: string) {
    super(message, 500, 'damaged_data');
  }
}

/**
 * Reads a JSON column through its zod schema, so a stored value of the wrong shape stops here with a message naming
 * the column (`what`, e.g. "runs.settings of run 3") instead of travelling on under a type it does not have.
 */
export function parseJsonColumn<S extends z.ZodType>(schema: S, text: string, what: string): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new JsonColumnError(`${what} is not valid JSON; the stored value is damaged`);
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new JsonColumnError(`${what} does not have the expected shape${at}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}
