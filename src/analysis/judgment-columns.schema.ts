// The columns of a judgments file read by `analyze --judgments` (judgments-file.ts): one zod schema per column,
// turning a cell's text into its value, and the header names that select each column.
import { z } from 'zod';
import { restoreCsvCell } from './csv-cell.js';

/** Every cell: a cell simarena neutralised against formula injection (csv-cell.ts) reads back as it was; trimmed. */
const cellText = z.string().transform((value) => restoreCsvCell(value).trim());

/** The export writes its flags as true/false; 1/0 is read too (spreadsheets and older files); anything else is unknown. */
const flag = cellText.transform((value): boolean | null => {
  const v = value.toLowerCase();
  return v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : null;
});

/** The side condition a was shown on: 0 for a, 1 for b, -1 when not given. */
const left = cellText.transform((value, ctx): -1 | 0 | 1 => {
  const v = value.toLowerCase();
  if (v === '') return -1;
  if (v === 'a') return 0;
  if (v === 'b') return 1;
  ctx.addIssue({ code: 'custom', message: `left must be a or b, got "${value}"` });
  return z.NEVER;
});

/** Which side of simarena's export won. */
const winner = cellText.transform((value, ctx): 'a' | 'b' | 'tie' => {
  const v = value.toLowerCase();
  if (v === 'model_a' || v === 'a') return 'a';
  if (v === 'model_b' || v === 'b') return 'b';
  if (v === 'tie') return 'tie';
  ctx.addIssue({ code: 'custom', message: `unknown winner "${value}" (expected model_a, model_b or tie)` });
  return z.NEVER;
});

/** A measurement of at least 0; NaN when the cell is empty (not measured). */
const measurement = (column: string) =>
  cellText.transform((value, ctx): number => {
    if (value === '') return NaN;
    const x = Number(value);
    if (Number.isFinite(x) && x >= 0) return x;
    ctx.addIssue({ code: 'custom', message: `${column} must be a number of at least 0, got "${value}"` });
    return z.NEVER;
  });

/** Every column read, by its name in the generic form; a column absent from the file reads as an empty cell. */
export const JUDGMENT_COLUMNS = {
  item_id: cellText,
  rater_id: cellText,
  label: cellText,
  condition_a: cellText,
  condition_b: cellText,
  winner,
  is_gold: flag,
  correct: flag,
  excluded: flag,
  exclusion_reason: cellText,
  left,
  a_words_per_turn: measurement('a_words_per_turn'),
  b_words_per_turn: measurement('b_words_per_turn'),
  active_time_s: measurement('active_time_s'),
  scenario_id: cellText,
  scenario_category: cellText,
  /** Issue 16: which question of the page the row answers; a file without it has one question. */
  question_id: cellText,
};

export type JudgmentColumn = keyof typeof JUDGMENT_COLUMNS;
export type JudgmentCell<C extends JudgmentColumn> = z.output<(typeof JUDGMENT_COLUMNS)[C]>;

/** simarena's judgments export names four columns as Chatbot Arena does (src/README.md, glossary): header → column. */
export const EXPORT_HEADER_ALIASES: Readonly<Record<string, JudgmentColumn>> = {
  pair_id: 'item_id',
  judge: 'rater_id',
  model_a: 'condition_a',
  model_b: 'condition_b',
};

export const GENERIC_REQUIRED = ['item_id', 'rater_id', 'label'];
export const EXPORT_REQUIRED = ['pair_id', 'judge', 'winner', 'model_a', 'model_b'];

/**
 * Where each column is in a file with this header (lower-cased, trimmed): in simarena's export the aliases name
 * their column and the generic names they replace are not read; a header repeated counts at its last position.
 */
export function columnPositions(header: string[], exported: boolean): Partial<Record<JudgmentColumn, number>> {
  const positions: Partial<Record<JudgmentColumn, number>> = {};
  const replaced = new Set(Object.values(EXPORT_HEADER_ALIASES));
  header.forEach((name, i) => {
    const alias = Object.hasOwn(EXPORT_HEADER_ALIASES, name) ? EXPORT_HEADER_ALIASES[name] : undefined;
    const column = exported ? (alias ?? (replaced.has(name as JudgmentColumn) ? undefined : name)) : name;
    if (column !== undefined && Object.hasOwn(JUDGMENT_COLUMNS, column)) positions[column as JudgmentColumn] = i;
  });
  return positions;
}
