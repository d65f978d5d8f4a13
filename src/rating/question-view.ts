import { batchQuestions, type BatchSettings } from '../batches/batch.schema.js';
import { answerFields } from './rater.schema.js';

/**
 * One question as the rater's page shows it (issue 16). Its form fields and element ids are by its place on the
 * page, never by its id: the first question keeps the one-question page's names (`choice`, `reason`, `choice-left`,
 * ...), question n ≥ 2 gets `choice_n`, `reason_n` and ids `choice-n-left`, `reason-n`.
 */
export type QuestionView = {
  /** Its number on the page, from 1. */
  number: number;
  text: string;
  allowTie: boolean;
  reasonMode: 'off' | 'optional' | 'required';
  /** A which-is-real question's confidence, 1-5 (issue 53); off for every other question. */
  confidenceMode: 'off' | 'optional' | 'required';
  confidenceName: string;
  /** Radio ids are `${confidenceId}-1` .. `-5`. */
  confidenceId: string;
  choiceName: string;
  reasonName: string;
  /** Radio ids are `${idPrefix}-left`, `-right`, `-tie`. */
  idPrefix: string;
  reasonId: string;
};

export function buildQuestionViews(settings: BatchSettings): QuestionView[] {
  return batchQuestions(settings).map((q, i) => {
    const names = answerFields(i);
    return {
      number: i + 1,
      text: q.text,
      allowTie: q.allowTie,
      reasonMode: q.reason,
      confidenceMode: q.confidence ?? 'off',
      confidenceName: names.confidence,
      confidenceId: i === 0 ? 'confidence' : `confidence-${i + 1}`,
      choiceName: names.choice,
      reasonName: names.reason,
      idPrefix: i === 0 ? 'choice' : `choice-${i + 1}`,
      reasonId: i === 0 ? 'reason' : `reason-${i + 1}`,
    };
  });
}
