import { UserFacingError } from '../errors/user-facing-error.js';

/** A scenario or character file that cannot be used; the message names the file, the record and the field. */
export class ScenarioFileError extends UserFacingError {}

export function describeRecord(index: number, record: unknown): string {
  const r = (typeof record === 'object' && record !== null ? record : {}) as Record<string, unknown>;
  const label = r.id ?? r.codename ?? r.pk ?? (r.first_name ? `${r.first_name} ${r.last_name ?? ''}`.trim() : undefined);
  return `record ${index + 1}${typeof label === 'string' && label ? ` (${JSON.stringify(label)})` : ''}`;
}
