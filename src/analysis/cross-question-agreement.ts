import type { CrossQuestionAgreement } from './analysis-report.js';
import type { JudgmentTable } from './judgment-table.js';

// How often one rater's answers to the questions of one page agree (issue 16): for each later question, among the
// assignments that answered both it and the first question, the share that picked the same winner (ties count as an
// answer of their own), and the same share among those where both answers were decisive. An assignment is one rater on
// one pair, so it is matched by the pair (item) and rater names, which both a batch and a judgments file carry.

export type QuestionTable = { id: string; text: string; table: JudgmentTable };

function answersByAssignment(t: JudgmentTable): Map<string, number> {
  const out = new Map<string, number>();
  for (let j = 0; j < t.n; j++) out.set(`${t.itemNames[t.item[j] as number] as string}\u0000${t.raterNames[t.rater[j] as number] as string}`, t.outcome[j] as number);
  return out;
}

const share = (k: number, n: number) => (n > 0 ? k / n : null);

/** The first question against each later one; null with fewer than two questions. */
export function crossQuestionAgreement(questions: QuestionTable[]): CrossQuestionAgreement | null {
  const [first, ...rest] = questions;
  if (!first || rest.length === 0) return null;
  const reference = answersByAssignment(first.table);
  return {
    reference: first.id,
    rows: rest.map((q) => {
      let assignments = 0;
      let same = 0;
      let decisive = 0;
      let sameDecisive = 0;
      for (const [key, outcome] of answersByAssignment(q.table)) {
        const other = reference.get(key);
        if (other === undefined) continue;
        assignments++;
        if (other === outcome) same++;
        if (other < 2 && outcome < 2) {
          decisive++;
          if (other === outcome) sameDecisive++;
        }
      }
      return {
        question_id: q.id,
        text: q.text,
        assignments,
        same_winner: same,
        same_winner_share: share(same, assignments),
        both_decisive: decisive,
        same_among_decisive: sameDecisive,
        same_among_decisive_share: share(sameDecisive, decisive),
      };
    }),
  };
}
