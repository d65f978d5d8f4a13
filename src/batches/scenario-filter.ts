import type { Db } from '../db/connection.js';
import { CATEGORIES } from '../scenarios/scenario.schema.js';
import { listScenarios } from '../scenarios/scenario.queries.js';
import { BatchError } from './batch-error.js';
import type { BatchSettings } from './batch.schema.js';

/** Which scenarios a batch's `scenarios` selector takes: "all", a category, or a list of ids (each must exist). */
export function scenarioFilter(db: Db, selector: BatchSettings['scenarios']): (scenarioId: string) => boolean {
  if (selector === 'all') return () => true;
  const scenarios = listScenarios(db);
  if (typeof selector === 'string' && (CATEGORIES as readonly string[]).includes(selector)) {
    const ids = new Set(scenarios.filter((s) => s.category === selector).map((s) => s.id));
    return (id) => ids.has(id);
  }
  const wanted = typeof selector === 'string' ? [selector] : selector;
  const known = new Set(scenarios.map((s) => s.id));
  const unknown = wanted.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new BatchError(`Unknown scenario(s): ${unknown.join(', ')} (use "all", a category or scenario ids)`);
  const ids = new Set(wanted);
  return (id) => ids.has(id);
}
