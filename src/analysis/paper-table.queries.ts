import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import { type Fact, factAliasesSchema, factSchema } from '../scenarios/scenario.schema.js';
import type { JudgmentTable } from './judgment-table.js';
import { type PaperDialogue, type PaperInput, type PaperSection, paperSection } from './paper-table.js';

// Reads what the paper table needs: the batch's human judgments (as the rest of the report has them, exclusions
// applied), its latest LLM judge, its dialogues with their scenario's category and marked facts, and the episode
// evaluations that scored them (tables owned by src/evaluation/ and src/scenarios/; analysis only reads).

const OUTCOME = ['a', 'b', 'tie'] as const;

/** Changes when evaluations, LLM judgments or marked facts change: part of the analysis cache key. */
export function paperDataVersion(db: Db): string {
  const row = db
    .prepare<[], { calls: number; scores: number; deals: number; judged: number; facts: number; states: string | null }>(
      `SELECT (SELECT coalesce(max(id), 0) FROM evaluation_calls) AS calls, (SELECT count(*) FROM episode_scores) AS scores,
              (SELECT count(*) FROM episode_deals) AS deals, (SELECT count(*) FROM llm_judgments) AS judged,
              (SELECT count(*) FROM scenario_facts) AS facts, (SELECT group_concat(id || state, ',') FROM evaluations) AS states`,
    )
    .get();
  return row ? `${row.calls}.${row.scores}.${row.deals}.${row.judged}.${row.facts}.${row.states ?? ''}` : '';
}

function humanJudgments(t: JudgmentTable): PaperInput['judgments'] {
  const out: PaperInput['judgments'] = [];
  for (let j = 0; j < t.n; j++) {
    const item = t.item[j] as number;
    const comparison = t.comparisons[t.itemComparison[item] as number];
    if (!comparison) continue;
    const category = t.itemCategory[item] as number;
    out.push({
      pair: t.itemNames[item] as string,
      conditionA: comparison.a,
      conditionB: comparison.b,
      category: category >= 0 ? (t.categoryNames[category] ?? null) : null,
      winner: OUTCOME[t.outcome[j] as number] ?? 'tie',
    });
  }
  return out;
}

type DialogueRow = { id: number; mode: string; model: string; end_reason: string | null; scenario_id: string; category: string };
const DIALOGUE_SELECT = 'SELECT d.id, d.mode, d.model, d.end_reason, d.scenario_id, s.category FROM dialogues d JOIN scenarios s ON s.id = d.scenario_id';

/** The dialogues of a batch's regular pairs still in it, or a run's complete dialogues. */
function loadDialogues(db: Db, of: { batchId: number } | { runId: number }): PaperDialogue[] {
  const rows =
    'batchId' in of
      ? db
          .prepare<{ b: number }, DialogueRow>(
            `${DIALOGUE_SELECT}
             WHERE d.id IN (SELECT dialogue_a_id FROM pairs WHERE batch_id = :b AND kind = 'regular' AND removed_at IS NULL
                            UNION SELECT dialogue_b_id FROM pairs WHERE batch_id = :b AND kind = 'regular' AND removed_at IS NULL)
             ORDER BY d.id`,
          )
          .all({ b: of.batchId })
      : db.prepare<{ r: number }, DialogueRow>(`${DIALOGUE_SELECT} WHERE d.run_id = :r AND d.state = 'complete' ORDER BY d.id`).all({ r: of.runId });
  const factsOf = new Map<string, Fact[]>();
  const factQuery = db.prepare<{ s: string }, { owner: number; kind: string; value: string; aliases: string }>(
    'SELECT owner, kind, value, aliases FROM scenario_facts WHERE scenario_id = :s ORDER BY position',
  );
  const turnQuery = db.prepare<{ d: number }, { speaker: number; action: string; text: string }>('SELECT speaker, action, text FROM turns WHERE dialogue_id = :d ORDER BY idx');
  return rows.map((r) => {
    if (!factsOf.has(r.scenario_id))
      factsOf.set(
        r.scenario_id,
        factQuery.all({ s: r.scenario_id }).map((f) => factSchema.parse({ owner: f.owner, kind: f.kind, value: f.value, aliases: parseJsonColumn(factAliasesSchema, f.aliases, `scenario_facts.aliases of scenario ${r.scenario_id}`) })),
      );
    return {
      id: r.id,
      mode: r.mode,
      model: r.model,
      condition: `${r.mode}:${r.model}`,
      category: r.category,
      endReason: r.end_reason,
      facts: factsOf.get(r.scenario_id) ?? [],
      turns: turnQuery.all({ d: r.id }),
    };
  });
}

/** The latest episode evaluation's scores and deals per dialogue, and which evaluations they come from. */
function loadEvaluationData(db: Db, dialogues: PaperDialogue[]): Pick<PaperInput, 'scores' | 'deals' | 'evaluations'> {
  const ids = JSON.stringify(dialogues.map((d) => d.id));
  // Per dialogue, the latest evaluation that scored it: one judge's reading per dialogue, never an average of judges.
  const scoreRows = db
    .prepare<{ ids: string }, { evaluation_id: number; dialogue_id: number; speaker: 1 | 2; dimension: string; score: number }>(
      `SELECT s.evaluation_id, s.dialogue_id, s.speaker, s.dimension, s.score FROM episode_scores s
       WHERE s.evaluation_id = (SELECT max(t.evaluation_id) FROM episode_scores t WHERE t.dialogue_id = s.dialogue_id)
         AND s.dialogue_id IN (SELECT value FROM json_each(:ids))`,
    )
    .all({ ids });
  const dealRows = db
    .prepare<{ ids: string }, { evaluation_id: number; dialogue_id: number; reached: number; price: number | null }>(
      `SELECT d.evaluation_id, d.dialogue_id, d.reached, d.price FROM episode_deals d
       WHERE d.evaluation_id = (SELECT max(t.evaluation_id) FROM episode_scores t WHERE t.dialogue_id = d.dialogue_id)
         AND d.dialogue_id IN (SELECT value FROM json_each(:ids))`,
    )
    .all({ ids });
  const used = [...new Set(scoreRows.map((s) => s.evaluation_id))].sort((a, b) => a - b);
  const evaluationQuery = db.prepare<{ id: number }, { name: string; judge_model: string; prompt_version: string }>('SELECT name, judge_model, prompt_version FROM evaluations WHERE id = :id');
  return {
    evaluations: used.map((id) => evaluationQuery.get({ id })).filter((e): e is { name: string; judge_model: string; prompt_version: string } => e !== undefined),
    scores: scoreRows.map((s) => ({ dialogueId: s.dialogue_id, speaker: s.speaker, dimension: s.dimension, score: s.score })),
    deals: dealRows.map((d) => ({ dialogueId: d.dialogue_id, reached: d.reached === 1, price: d.price })),
  };
}

/** The paper table of a run on its own (no humans, no LLM judge): every complete dialogue, the model-free metrics and its evaluations. */
export function loadRunPaperSection(db: Db, runId: number): PaperSection {
  const dialogues = loadDialogues(db, { runId });
  return paperSection({ of: 'run', judgments: [], judge: null, judgeAnswers: [], dialogues, ...loadEvaluationData(db, dialogues) });
}

/** What a batch's paper table reads from the database besides the human judgments (which come with the report's table). */
export type PaperData = Omit<PaperInput, 'of' | 'judgments'>;

/** Reads the batch's paper data; the section itself is computed by `paperSectionOf`, with no database at hand. */
export function loadPaperData(db: Db, batchId: number): PaperData {
  const judge = db
    .prepare<{ b: number }, { id: number; name: string; judge_model: string; prompt_version: string }>(
      `SELECT e.id, e.name, e.judge_model, e.prompt_version FROM evaluations e
       WHERE e.batch_id = :b AND e.kind = 'pairwise' AND EXISTS (SELECT 1 FROM llm_judgments j WHERE j.evaluation_id = e.id)
       ORDER BY e.id DESC LIMIT 1`,
    )
    .get({ b: batchId });
  const judgeAnswers = judge
    ? db
        .prepare<{ e: number; b: number }, { pair_id: number; left_side: 'a' | 'b'; choice: 'left' | 'right' | 'tie'; winner: 'a' | 'b' | 'tie'; condition_a: string; condition_b: string; category: string }>(
          `SELECT j.pair_id, j.left_side, j.choice, j.winner, c.condition_a, c.condition_b, s.category
           FROM llm_judgments j JOIN pairs p ON p.id = j.pair_id JOIN comparisons c ON c.id = p.comparison_id JOIN scenarios s ON s.id = p.scenario_id
           WHERE j.evaluation_id = :e AND p.batch_id = :b AND p.kind = 'regular' AND p.removed_at IS NULL ORDER BY j.pair_id, j.left_side`,
        )
        .all({ e: judge.id, b: batchId })
        .map((r) => ({ pair: String(r.pair_id), leftSide: r.left_side, choice: r.choice, winner: r.winner, conditionA: r.condition_a, conditionB: r.condition_b, category: r.category }))
    : [];
  const dialogues = loadDialogues(db, { batchId });
  return {
    judge: judge ? { name: judge.name, judge_model: judge.judge_model, prompt_version: judge.prompt_version } : null,
    judgeAnswers,
    dialogues,
    ...loadEvaluationData(db, dialogues),
  };
}

/**
 * A batch's paper section from its paper data and the report's judgment table; `realism`, a which-is-real question's
 * table and real condition (issue 53), adds each condition's judged-real share.
 */
export function paperSectionOf(data: PaperData, table: JudgmentTable, realism: { real: string; table: JudgmentTable } | null = null): PaperSection {
  return paperSection({ judgments: humanJudgments(table), ...data, realism: realism ? { real: realism.real, judgments: humanJudgments(realism.table) } : null });
}
