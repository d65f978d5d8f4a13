import type { Db } from '../db/connection.js';
import { type SimulationCard, buildSimulationCard, simulationCardMarkdown, storedSimulationCardSchema } from '../generation/simulation-card.js';
import type { RunRow } from '../generation/run.queries.js';
import { parseJsonColumn } from '../db/json-column.js';

export type RunCard = { run: RunRow; card: SimulationCard; markdown: string };

function storedCard(run: RunRow): SimulationCard | null {
  if (!run.simulation_card) return null;
  try {
    return parseJsonColumn(storedSimulationCardSchema, run.simulation_card, `runs.simulation_card of run ${run.id}`);
  } catch {
    return null;
  }
}

/**
 * The simulation card of a run: the one stored when the run ended (what was true then), or one built now from the
 * run's rows for runs that never wrote one (imports, the demo, runs still going).
 */
export function runCard(db: Db, run: RunRow): RunCard {
  const stored = storedCard(run);
  if (stored) {
    try {
      return { run, card: stored, markdown: simulationCardMarkdown(stored) };
    } catch {
      // A card stored by an older version that the current renderer cannot read: build a fresh one below.
    }
  }
  const card = buildSimulationCard(db, run.id);
  return { run, card, markdown: simulationCardMarkdown(card) };
}
