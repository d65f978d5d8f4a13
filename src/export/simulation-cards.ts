import type { Db } from '../db/connection.js';
import { type SimulationCard, buildSimulationCard, simulationCardMarkdown } from '../generation/simulation-card.js';
import type { RunRow } from '../generation/run.queries.js';

export type RunCard = { run: RunRow; card: SimulationCard; markdown: string };

function storedCard(run: RunRow): SimulationCard | null {
  if (!run.simulation_card) return null;
  try {
    const card = JSON.parse(run.simulation_card) as Partial<SimulationCard>;
    return card.card_version === 1 && card.run && card.settings && card.counts ? (card as SimulationCard) : null;
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
