import type { AnalysisReport } from './analysis-report.js';
import { crossQuestionAgreement } from './cross-question-agreement.js';
import type { JudgmentTable } from './judgment-table.js';

// Issue 16: a report over several questions is one report per question, assembled here for a batch
// (analysis-cache.ts) and for a judgments file with a question_id column (cli/analyze.ts) alike.

export type QuestionPart = { id: string; text: string; report: AnalysisReport; table: JudgmentTable };

export const FIRST_QUESTION_RATERS_NOTE =
  'Rater quality (attention checks, leave-one-out agreement) is judged on the first question: attention checks are answered there.';

/**
 * The top-level fields are the first question's, so readers of a one-question report read the first question; every
 * question's report is in `questions` (page order) and `cross_question` says how often the answers agree. One part
 * gives back its report unchanged.
 */
export function combineQuestionReports(parts: QuestionPart[]): AnalysisReport {
  const [first] = parts;
  if (!first) throw new Error('combineQuestionReports needs at least one question');
  if (parts.length === 1) return first.report;
  parts.forEach((p, index) => {
    p.report.question = { id: p.id, text: p.text, index };
  });
  return {
    ...first.report,
    notes: [...first.report.notes, FIRST_QUESTION_RATERS_NOTE],
    questions: parts.map((p) => ({ id: p.id, text: p.text, ...p.report })),
    cross_question: crossQuestionAgreement(parts.map((p) => ({ id: p.id, text: p.text, table: p.table }))),
  };
}

/**
 * One question's report out of a report: the top-level fields when it is the first question (or the report has one
 * question), else that question's entry of `questions`. An id the report does not have gives the first question;
 * callers check ids against the batch first (resolveAnalysisQuestion).
 */
export function selectQuestionReport(report: AnalysisReport, questionId: string | undefined): AnalysisReport {
  const { questions, cross_question: _cross, ...top } = report;
  if (!questions) return report;
  const entry = questions.find((q) => q.id === questionId) ?? questions[0];
  if (!entry) return top;
  const { id: _id, text: _text, ...own } = entry;
  return own;
}

/** Each question's report in page order, with its place; empty for a report of one question. */
export function questionSections(report: AnalysisReport): { id: string; text: string; index: number; report: AnalysisReport }[] {
  return (report.questions ?? []).map((q, index) => ({ id: q.id, text: q.text, index, report: selectQuestionReport(report, q.id) }));
}

/** The heading of a question's section: its place, id and text (the text is what raters read). */
export function questionHeading(q: { id: string; text: string; index: number }): string {
  return `Question ${q.index + 1} (${q.id}): ${q.text}`;
}
