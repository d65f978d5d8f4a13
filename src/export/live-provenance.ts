import { judgePseudonym } from '../rating/judge-pseudonym.js';
import type { ExportContext } from './export-context.js';
import { type ExportDialogueRow, findCollectedForExport, listLivePlayersForExport, listLiveTurnsForExport, type LivePlayerExportRow } from './export.queries.js';

// The provenance of a collected dialogue (issue 52: "who played, timings of every turn, the model calls of the agent
// side") as the dialogue exports carry it. A person is named by the pseudonym the batch that collected them gives
// (`judge` in that batch's own exports, the same rule as every export's raters); their platform ids only with
// --with-provider-ids. The agent's calls are the dialogue's calls (`metrics.calls`, and `calls` with --with-calls).

type ExportOptions = Pick<ExportContext['options'], 'withProviderIds'>;

function playerRecord(row: LivePlayerExportRow, salt: string, meta: { agent?: { model?: unknown; endpoint?: unknown } }, options: ExportOptions) {
  if (row.rater_public_id === null || row.provider === null) {
    return { character: row.character, played_by: 'agent', model: meta.agent?.model ?? null, endpoint: meta.agent?.endpoint ?? null };
  }
  const record: Record<string, unknown> = {
    character: row.character,
    played_by: 'person',
    player: judgePseudonym(salt, { provider: row.provider, participantId: row.participant_id, raterPublicId: row.rater_public_id }),
    provider: row.provider,
  };
  if (options.withProviderIds) Object.assign(record, { participant_id: row.participant_id, study_id: row.study_id, session_id: row.session_id });
  return { ...record, outcome: row.outcome, waited_s: row.waited_ms === null ? null : row.waited_ms / 1000, partner_guess: row.partner_guess, goal_score: row.goal_score };
}

function readAgentMeta(text: string): { agent?: { model?: unknown; endpoint?: unknown } } {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as { agent?: { model?: unknown; endpoint?: unknown } }) : {};
  } catch {
    return {};
  }
}

/**
 * A collected dialogue's `live` record: the batch that collected it, how it ended and its review, who played each
 * character, and each turn's clock: when it began, when it was sent and the time taken between, whether it passed
 * unanswered, and the typing signals. Null for a dialogue no collecting batch made (generated, imported).
 */
export function liveProvenance(ctx: Pick<ExportContext, 'db' | 'options'>, row: ExportDialogueRow) {
  if (row.origin !== 'collected') return null;
  const collected = findCollectedForExport(ctx.db, row.id);
  if (!collected) return null;
  const meta = readAgentMeta(row.meta);
  const players = listLivePlayersForExport(ctx.db, row.id).map((p) => playerRecord(p, collected.judge_salt, meta, ctx.options));
  const turns = listLiveTurnsForExport(ctx.db, row.id).map((t) => ({
    idx: t.idx,
    played_by: t.by_person === 1 ? 'person' : 'agent',
    turn_started_at: t.turn_started_at,
    sent_at: t.sent_at,
    time_taken_ms: Date.parse(t.sent_at) - Date.parse(t.turn_started_at),
    timed_out: t.timed_out === 1,
    keystrokes: t.keystrokes,
    typing_ms: t.typing_ms,
    paste_attempts: t.paste_attempts,
  }));
  return { collected_by_batch: collected.batch_id, outcome: collected.outcome, outcome_reason: collected.reason, review: collected.review, players, turns };
}
