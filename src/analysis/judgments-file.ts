import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { AnalysisReport } from './analysis-report.js';
import { columnPositions, EXPORT_REQUIRED, GENERIC_REQUIRED, JUDGMENT_COLUMNS, type JudgmentCell, type JudgmentColumn } from './judgment-columns.schema.js';
import { findDuplicateJudgment, type JudgmentTable } from './judgment-table.js';

/** A problem in a judgments file, with its line number: shown to the user as one line. */
export class JudgmentsFileError extends UserFacingError {}

export type JudgmentsFile = {
  table: JudgmentTable;
  format: 'simarena export' | 'generic';
  exclusions: AnalysisReport['exclusions'];
  attention: Map<string, { correct: number; answered: number }>;
  /** The question the table holds (null: the file has no question_id column) and every question in the file, in order of first appearance. */
  question: string | null;
  questions: string[];
};


/** Distinct cells remembered per column (memory stays small whatever the file's size). */
const PARSED_PER_COLUMN = 4096;

/** Yields the file's text, decoded as strict UTF-8; invalid bytes are reported with their line number. */
async function* decodeUtf8(path: string, fail: (line: number, problem: string) => never): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lines = 1;
  let carry: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path)) {
    const bytes = chunk as Buffer;
    let text: string;
    try {
      text = decoder.decode(bytes, { stream: true });
    } catch {
      const all = Buffer.concat([carry, bytes]);
      const bad = firstInvalidUtf8(all);
      for (let k = carry.length; k < bad; k++) if (all[k] === 0x0a) lines++;
      fail(lines, 'the text is not valid UTF-8 (save the file as UTF-8)');
    }
    // Keep the undecoded tail (a character split across chunks) to locate a later error precisely.
    carry = incompleteTail(bytes);
    for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) === 10) lines++;
    yield text;
  }
  try {
    const rest = decoder.decode();
    if (rest) yield rest;
  } catch {
    fail(lines, 'the file ends in the middle of a UTF-8 character');
  }
}

/** The bytes of a character cut off at the end of a chunk (up to 3), which the next chunk completes. */
function incompleteTail(b: Buffer): Buffer {
  for (let back = 1; back <= 3 && back <= b.length; back++) {
    const c = b[b.length - back] as number;
    if ((c & 0xc0) === 0x80) continue;
    const len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return len > back ? Buffer.from(b.subarray(b.length - back)) : Buffer.alloc(0);
  }
  return Buffer.alloc(0);
}

function firstInvalidUtf8(b: Buffer): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i] as number;
    const len = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (len === 0) return i;
    for (let k = 1; k < len; k++) if (i + k >= b.length || ((b[i + k] as number) & 0xc0) !== 0x80) return i;
    i += len;
  }
  return b.length;
}

function interner() {
  const index = new Map<string, number>();
  const names: string[] = [];
  let last = '';
  let lastId = -1;
  return {
    names,
    id(name: string): number {
      // Consecutive rows mostly repeat the same value (conditions, scenario): skip the map for them.
      if (name === last && lastId >= 0) return lastId;
      let i = index.get(name);
      if (i === undefined) {
        i = names.length;
        index.set(name, i);
        names.push(name);
      }
      last = name;
      lastId = i;
      return i;
    },
  };
}

/**
 * Reads a judgments CSV: either the generic `item_id, rater_id, label` form (optional condition_a, condition_b,
 * left, a_words_per_turn, b_words_per_turn, scenario_id, scenario_category, active_time_s) or simarena's own
 * judgments export as it is (excluded and gold rows dropped and listed). Every problem names its line.
 */
export async function readJudgmentsFile(path: string, options: { order?: [string, string]; question?: string } = {}): Promise<JudgmentsFile> {
  const failAt = (line: number, problem: string): never => {
    throw new JudgmentsFileError(`${path} line ${line}: ${problem}`);
  };
  let header: string[] | null = null;
  let format: JudgmentsFile['format'] = 'generic';
  // Rows are kept compactly (interned strings, numbers) until the two conditions are known.
  const items = interner();
  const raters = interner();
  const values = interner();
  const scenarios = interner();
  const categories = interner();
  const intern = values.id;
  const rows = { line: [] as number[], item: [] as number[], rater: [] as number[], label: [] as number[], condA: [] as number[], condB: [] as number[], left: [] as number[], aWords: [] as number[], bWords: [] as number[], seconds: [] as number[], scenario: [] as number[], category: [] as number[] };
  const dropped = new Map<string, number>();
  const attention = new Map<string, { correct: number; answered: number }>();
  const TIE_ID = -2;
  // Issue 16: a file with a question_id column holds one row per question per assignment; one question is read at a
  // time (the one asked, else the first that appears), since two questions' rows would count each rater twice.
  const questionsSeen: string[] = [];

  // Where each column is, fixed by the header line; each cell is read through its column's schema when needed.
  let positions: Partial<Record<JudgmentColumn, number>> = {};
  // The schemas are pure, and cells repeat a lot (conditions, raters, labels, scenarios, sides): each column keeps the
  // values it parsed recently, so a file of a million rows runs zod on its distinct cells, not on every cell; and its
  // last cell, which the next row mostly repeats (a pair's rows come together), is checked before the map.
  const parsed = new Map<JudgmentColumn, { seen: Map<string, unknown>; lastText: string | null; lastValue: unknown }>();
  // The record being read and its line. The helpers below read them rather than being made anew for every record:
  // three closures a row cost a million-row file about a fifth of its reading time.
  let record: string[] = [];
  let line = 0;
  const fail = (problem: string): never => failAt(line, problem);
  const cell = <C extends JudgmentColumn>(column: C): JudgmentCell<C> => {
    const i = positions[column];
    const text = i === undefined ? '' : (record[i] ?? '');
    let memo = parsed.get(column);
    if (memo === undefined) parsed.set(column, (memo = { seen: new Map(), lastText: null, lastValue: undefined }));
    if (text === memo.lastText) return memo.lastValue as JudgmentCell<C>;
    let value = memo.seen.get(text);
    if (value === undefined) {
      const result = JUDGMENT_COLUMNS[column].safeParse(text);
      if (!result.success) fail(result.error.issues[0]?.message ?? `${column} is not valid`);
      if (memo.seen.size >= PARSED_PER_COLUMN) memo.seen.clear();
      value = result.data;
      memo.seen.set(text, value);
    }
    memo.lastText = text;
    memo.lastValue = value;
    return value as JudgmentCell<C>;
  };
  // The two conditions of the record's pair, which must both be named and differ; `columns` names them for the message.
  const readConditions = (columns: string): [string, string] => {
    const a = cell('condition_a');
    const b = cell('condition_b');
    if (!a || !b) fail(`${columns} must not be empty`);
    if (a === b) fail(`${columns} are the same (${a})`);
    return [a, b];
  };

  const onHeader = () => {
    header = record.map((h) => h.trim().toLowerCase());
    const names = new Set(header);
    if (EXPORT_REQUIRED.every((c) => names.has(c)) && !names.has('item_id')) format = 'simarena export';
    else {
      const missing = GENERIC_REQUIRED.filter((c) => !names.has(c));
      if (missing.length > 0)
        failAt(line, `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (expected item_id, rater_id, label, or simarena's judgments export)`);
      if (names.has('condition_a') !== names.has('condition_b')) failAt(line, 'condition_a and condition_b come together: one of them is missing');
    }
    positions = columnPositions(header, format === 'simarena export');
  };

  const onRecord = () => {
    if (positions.question_id !== undefined) {
      const question = cell('question_id');
      if (!question) fail('question_id is empty');
      if (!questionsSeen.includes(question)) questionsSeen.push(question);
      if (question !== (options.question ?? questionsSeen[0])) return;
    }
    const item = cell('item_id');
    const rater = cell('rater_id');
    let label: number;
    let condA = -1;
    let condB = -1;
    if (format === 'simarena export') {
      const isGold = cell('is_gold') === true;
      if (isGold && item && rater) {
        const correct = cell('correct');
        if (correct !== null) {
          const tally = attention.get(rater) ?? { correct: 0, answered: 0 };
          tally.answered++;
          if (correct) tally.correct++;
          attention.set(rater, tally);
        }
      }
      // Dropped before the conditions are checked: a gold pair sets a dialogue against its own variant, so both
      // sides carry the same condition.
      if (cell('excluded') === true) {
        const reason = `excluded: ${cell('exclusion_reason') || 'no reason given'}`;
        dropped.set(reason, (dropped.get(reason) ?? 0) + 1);
        return;
      }
      if (isGold) {
        dropped.set('gold (attention or onboarding) pairs', (dropped.get('gold (attention or onboarding) pairs') ?? 0) + 1);
        return;
      }
      const [a, b] = readConditions('model_a and model_b');
      condA = intern(a);
      condB = intern(b);
      const winner = cell('winner');
      label = winner === 'a' ? condA : winner === 'b' ? condB : TIE_ID;
    } else {
      const text = cell('label');
      if (!text) fail('label is empty');
      label = text.toLowerCase() === 'tie' ? TIE_ID : intern(text);
      if (positions.condition_a !== undefined) {
        const [a, b] = readConditions('condition_a and condition_b');
        condA = intern(a);
        condB = intern(b);
        if (label !== TIE_ID && label !== condA && label !== condB) fail(`unknown label "${text}": expected ${a}, ${b} or tie`);
      } else if (options.order && label !== TIE_ID && !options.order.includes(text)) {
        fail(`unknown label "${text}": expected ${options.order.join(', ')} or tie (from --order)`);
      }
    }
    if (!item) fail(`${format === 'generic' ? 'item_id' : 'pair_id'} is empty`);
    if (!rater) fail(`${format === 'generic' ? 'rater_id' : 'judge'} is empty`);
    const side = cell('left');
    rows.line.push(line);
    rows.item.push(items.id(item));
    rows.rater.push(raters.id(rater));
    rows.label.push(label);
    rows.condA.push(condA);
    rows.condB.push(condB);
    rows.left.push(side);
    rows.aWords.push(cell('a_words_per_turn'));
    rows.bWords.push(cell('b_words_per_turn'));
    rows.seconds.push(cell('active_time_s'));
    const scenario = cell('scenario_id');
    const category = cell('scenario_category');
    rows.scenario.push(scenario ? scenarios.id(scenario) : -1);
    rows.category.push(category ? categories.id(category) : -1);
  };

  // Records are handled in the parser's 'data' event, where parser.info.lines is the current record's last line;
  // this is several times cheaper than asking csv-parse for an info object per record.
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: false });
  const source = Readable.from(decodeUtf8(path, failAt));
  let failure: unknown = null;
  parser.on('data', (next: string[]) => {
    if (failure !== null) return;
    record = next;
    line = parser.info.lines;
    try {
      if (header === null) onHeader();
      else onRecord();
    } catch (error) {
      failure = error;
      source.destroy();
      parser.destroy();
    }
  });
  try {
    await pipeline(source, parser);
  } catch (error) {
    throw toFileError(failure ?? error, path);
  }
  if (failure !== null) throw toFileError(failure, path);
  if (header === null) failAt(1, 'the file is empty: expected a header line with item_id, rater_id, label');
  if (options.question !== undefined && !questionsSeen.includes(options.question))
    throw new JudgmentsFileError(
      positions.question_id === undefined
        ? `${path} has no question_id column, so no question "${options.question}" (it holds one question)`
        : `${path} has no question "${options.question}"; its questions are: ${questionsSeen.join(', ') || '(none)'}`,
    );

  // Without condition columns: a is the condition first in alphabetical order, unless --order says otherwise.
  let fileA = -1;
  let fileB = -1;
  if (format === 'generic' && positions.condition_a === undefined) {
    if (options.order) {
      fileA = intern(options.order[0]);
      fileB = intern(options.order[1]);
    } else {
      const seen: number[] = [];
      rows.label.forEach((l, j) => {
        if (l === TIE_ID || seen.includes(l)) return;
        seen.push(l);
        if (seen.length > 2)
          failAt(rows.line[j] as number, `a third condition "${values.names[l] as string}" in a file without condition_a/condition_b columns (give them, or --order A,B for two conditions)`);
      });
      if (seen.length < 2 && rows.label.length > 0)
        failAt(
          2,
          seen.length === 0
            ? 'every judgment is a tie, so the labels name no condition: name both with --order A,B or condition_a/condition_b columns'
            : 'only one condition appears among the labels: name both with --order A,B or condition_a/condition_b columns',
        );
      const sorted = seen.map((l) => values.names[l] as string).sort();
      fileA = intern(sorted[0] ?? 'A');
      fileB = intern(sorted[1] ?? 'B');
    }
  }
  // Build the column table directly from the interned rows (no second pass through strings).
  const n = rows.item.length;
  const nItems = items.names.length;
  const comparisonOf = new Map<number, number>();
  const comparisons: { a: string; b: string }[] = [];
  const itemComparison = new Int32Array(nItems).fill(-1);
  const itemScenario = new Int32Array(nItems).fill(-1);
  const itemCategory = new Int32Array(nItems).fill(-1);
  const itemWordsA = new Float64Array(nItems).fill(NaN);
  const itemWordsB = new Float64Array(nItems).fill(NaN);
  const outcome = new Int8Array(n);
  for (let j = 0; j < n; j++) {
    const a = (rows.condA[j] as number) >= 0 ? (rows.condA[j] as number) : fileA;
    const b = (rows.condB[j] as number) >= 0 ? (rows.condB[j] as number) : fileB;
    const key = a * 1048576 + b;
    let c = comparisonOf.get(key);
    if (c === undefined) {
      c = comparisons.length;
      comparisonOf.set(key, c);
      comparisons.push({ a: values.names[a] as string, b: values.names[b] as string });
    }
    const i = rows.item[j] as number;
    if (itemComparison[i] === -1) itemComparison[i] = c;
    else if (itemComparison[i] !== c) failAt(rows.line[j] as number, `item ${items.names[i] as string} appears with two different pairs of conditions`);
    if (itemScenario[i] === -1) itemScenario[i] = rows.scenario[j] as number;
    if (itemCategory[i] === -1) itemCategory[i] = rows.category[j] as number;
    if (Number.isNaN(itemWordsA[i])) itemWordsA[i] = rows.aWords[j] as number;
    if (Number.isNaN(itemWordsB[i])) itemWordsB[i] = rows.bWords[j] as number;
    const l = rows.label[j] as number;
    outcome[j] = l === TIE_ID ? 2 : l === a ? 0 : 1;
  }
  const table: JudgmentTable = {
    n,
    item: Int32Array.from(rows.item),
    rater: Int32Array.from(rows.rater),
    outcome,
    left: Int8Array.from(rows.left),
    seconds: Float64Array.from(rows.seconds),
    itemNames: items.names,
    raterNames: raters.names,
    itemComparison,
    itemScenario,
    itemCategory,
    itemWordsA,
    itemWordsB,
    comparisons,
    scenarioNames: scenarios.names,
    categoryNames: categories.names,
  };
  const duplicate = findDuplicateJudgment(table);
  if (duplicate) failAt(rows.line[duplicate.row] as number, `duplicate judgment: rater ${duplicate.rater} already judged item ${duplicate.item}`);
  return {
    table,
    format,
    exclusions: { raters: [], dropped: [...dropped.entries()].map(([reason, judgments]) => ({ reason, judgments })) },
    attention,
    question: positions.question_id === undefined ? null : (options.question ?? questionsSeen[0] ?? null),
    questions: questionsSeen,
  };
}

function toFileError(error: unknown, path: string): Error {
  if (error instanceof JudgmentsFileError) return error;
  const e = error as { code?: string; lines?: number; message?: string };
  if (e.code === 'ENOENT') return new JudgmentsFileError(`${path}: no such file`);
  if (e.code === 'EISDIR') return new JudgmentsFileError(`${path} is a folder, not a file`);
  if (typeof e.code === 'string' && e.code.startsWith('CSV_')) {
    const reason = (e.message ?? 'malformed CSV').replace(/^Invalid Record Length:.*$/, 'a row has a different number of fields than the header').replace(/ at line \d+\.?$/, '');
    return new JudgmentsFileError(`${path} line ${e.lines ?? '?'}: ${reason}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}
