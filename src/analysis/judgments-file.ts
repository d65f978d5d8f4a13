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

type ReadOptions = { order?: [string, string]; question?: string };
type Interner = ReturnType<typeof interner>;
/** Rows kept compactly (interned strings, numbers) until the two conditions are known; -1 where a value is absent. */
type CompactRows = {
  line: number[]; item: number[]; rater: number[]; label: number[]; condA: number[]; condB: number[]; left: number[];
  aWords: number[]; bWords: number[]; seconds: number[]; scenario: number[]; category: number[];
};

/** Everything known while one file is read; the step functions below share it instead of closing over locals. */
type FileReading = {
  path: string;
  options: ReadOptions;
  header: string[] | null;
  format: JudgmentsFile['format'];
  // Where each column is, fixed by the header line; each cell is read through its column's schema when needed.
  positions: Partial<Record<JudgmentColumn, number>>;
  // The schemas are pure, and cells repeat a lot (conditions, raters, labels, scenarios, sides): each column keeps the
  // values it parsed recently, so a file of a million rows runs zod on its distinct cells, not on every cell; and its
  // last cell, which the next row mostly repeats (a pair's rows come together), is checked before the map.
  parsed: Map<JudgmentColumn, { seen: Map<string, unknown>; lastText: string | null; lastValue: unknown }>;
  // The record being read and its line. The step functions read them rather than closures being made anew for every
  // record: three closures a row cost a million-row file about a fifth of its reading time.
  record: string[];
  line: number;
  items: Interner;
  raters: Interner;
  values: Interner;
  scenarios: Interner;
  categories: Interner;
  rows: CompactRows;
  dropped: Map<string, number>;
  attention: Map<string, { correct: number; answered: number }>;
  // Issue 16: a file with a question_id column holds one row per question per assignment; one question is read at a
  // time (the one asked, else the first that appears), since two questions' rows would count each rater twice.
  questionsSeen: string[];
};

const TIE_ID = -2;

/**
 * Reads a judgments CSV: either the generic `item_id, rater_id, label` form (optional condition_a, condition_b,
 * left, a_words_per_turn, b_words_per_turn, scenario_id, scenario_category, active_time_s) or simarena's own
 * judgments export as it is (excluded and gold rows dropped and listed). Every problem names its line.
 */
export async function readJudgmentsFile(path: string, options: ReadOptions = {}): Promise<JudgmentsFile> {
  const reading = startReading(path, options);
  await parseRecords(reading);
  checkFileHoldsQuestion(reading);
  const [fileA, fileB] = resolveFileConditions(reading);
  const table = buildTable(reading, fileA, fileB);
  const duplicate = findDuplicateJudgment(table);
  if (duplicate) failAt(path, reading.rows.line[duplicate.row] as number, `duplicate judgment: rater ${duplicate.rater} already judged item ${duplicate.item}`);
  const { positions, questionsSeen } = reading;
  return {
    table,
    format: reading.format,
    exclusions: { raters: [], dropped: [...reading.dropped.entries()].map(([reason, judgments]) => ({ reason, judgments })) },
    attention: reading.attention,
    question: positions.question_id === undefined ? null : (options.question ?? questionsSeen[0] ?? null),
    questions: questionsSeen,
  };
}

function failAt(path: string, line: number, problem: string): never {
  throw new JudgmentsFileError(`${path} line ${line}: ${problem}`);
}

/** Fails naming the line of the record being read. */
function fail(r: FileReading, problem: string): never {
  return failAt(r.path, r.line, problem);
}

function startReading(path: string, options: ReadOptions): FileReading {
  return {
    path,
    options,
    header: null,
    format: 'generic',
    positions: {},
    parsed: new Map(),
    record: [],
    line: 0,
    items: interner(),
    raters: interner(),
    values: interner(),
    scenarios: interner(),
    categories: interner(),
    rows: { line: [], item: [], rater: [], label: [], condA: [], condB: [], left: [], aWords: [], bWords: [], seconds: [], scenario: [], category: [] },
    dropped: new Map(),
    attention: new Map(),
    questionsSeen: [],
  };
}

/** Streams the file through csv-parse: the first record is the header, every later one a judgment. */
async function parseRecords(r: FileReading): Promise<void> {
  // Records are handled in the parser's 'data' event, where parser.info.lines is the current record's last line;
  // this is several times cheaper than asking csv-parse for an info object per record.
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: false });
  const source = Readable.from(decodeUtf8(r.path, (line, problem) => failAt(r.path, line, problem)));
  let failure: unknown = null;
  parser.on('data', (next: string[]) => {
    if (failure !== null) return;
    r.record = next;
    r.line = parser.info.lines;
    try {
      if (r.header === null) readHeader(r);
      else readRecord(r);
    } catch (error) {
      failure = error;
      source.destroy();
      parser.destroy();
    }
  });
  try {
    await pipeline(source, parser);
  } catch (error) {
    throw toFileError(failure ?? error, r.path);
  }
  if (failure !== null) throw toFileError(failure, r.path);
}

/** The header line decides the format and where each column is. */
function readHeader(r: FileReading): void {
  const header = r.record.map((h) => h.trim().toLowerCase());
  r.header = header;
  const names = new Set(header);
  if (EXPORT_REQUIRED.every((c) => names.has(c)) && !names.has('item_id')) r.format = 'simarena export';
  else {
    const missing = GENERIC_REQUIRED.filter((c) => !names.has(c));
    if (missing.length > 0)
      fail(r, `missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (expected item_id, rater_id, label, or simarena's judgments export)`);
    if (names.has('condition_a') !== names.has('condition_b')) fail(r, 'condition_a and condition_b come together: one of them is missing');
  }
  r.positions = columnPositions(header, r.format === 'simarena export');
}

/** The record's cell in `column`, parsed by the column's schema (memoised per column). */
function readCell<C extends JudgmentColumn>(r: FileReading, column: C): JudgmentCell<C> {
  const i = r.positions[column];
  const text = i === undefined ? '' : (r.record[i] ?? '');
  let memo = r.parsed.get(column);
  if (memo === undefined) r.parsed.set(column, (memo = { seen: new Map(), lastText: null, lastValue: undefined }));
  if (text === memo.lastText) return memo.lastValue as JudgmentCell<C>;
  let value = memo.seen.get(text);
  if (value === undefined) {
    const result = JUDGMENT_COLUMNS[column].safeParse(text);
    if (!result.success) fail(r, result.error.issues[0]?.message ?? `${column} is not valid`);
    if (memo.seen.size >= PARSED_PER_COLUMN) memo.seen.clear();
    value = result.data;
    memo.seen.set(text, value);
  }
  memo.lastText = text;
  memo.lastValue = value;
  return value as JudgmentCell<C>;
}

/** The two conditions of the record's pair, which must both be named and differ; `columns` names them for the message. */
function readConditions(r: FileReading, columns: string): [string, string] {
  const a = readCell(r, 'condition_a');
  const b = readCell(r, 'condition_b');
  if (!a || !b) fail(r, `${columns} must not be empty`);
  if (a === b) fail(r, `${columns} are the same (${a})`);
  return [a, b];
}

/** Whether the record answers the question being read (always, in a file without a question_id column). */
function isQuestionRead(r: FileReading): boolean {
  if (r.positions.question_id === undefined) return true;
  const question = readCell(r, 'question_id');
  if (!question) fail(r, 'question_id is empty');
  if (!r.questionsSeen.includes(question)) r.questionsSeen.push(question);
  return question === (r.options.question ?? r.questionsSeen[0]);
}

function readRecord(r: FileReading): void {
  if (!isQuestionRead(r)) return;
  const item = readCell(r, 'item_id');
  const rater = readCell(r, 'rater_id');
  if (r.format === 'simarena export') readExportRecord(r, item, rater);
  else readGenericRecord(r, item, rater);
}

/** A record of simarena's judgments export: gold pairs count toward attention and are dropped, as are excluded rows. */
function readExportRecord(r: FileReading, item: string, rater: string): void {
  const isGold = readCell(r, 'is_gold') === true;
  if (isGold && item && rater) {
    const correct = readCell(r, 'correct');
    if (correct !== null) {
      const tally = r.attention.get(rater) ?? { correct: 0, answered: 0 };
      tally.answered++;
      if (correct) tally.correct++;
      r.attention.set(rater, tally);
    }
  }
  // Dropped before the conditions are checked: a gold pair sets a dialogue against its own variant, so both
  // sides carry the same condition.
  if (readCell(r, 'excluded') === true) {
    const reason = `excluded: ${readCell(r, 'exclusion_reason') || 'no reason given'}`;
    r.dropped.set(reason, (r.dropped.get(reason) ?? 0) + 1);
    return;
  }
  if (isGold) {
    r.dropped.set('gold (attention or onboarding) pairs', (r.dropped.get('gold (attention or onboarding) pairs') ?? 0) + 1);
    return;
  }
  const [a, b] = readConditions(r, 'model_a and model_b');
  const condA = r.values.id(a);
  const condB = r.values.id(b);
  const winner = readCell(r, 'winner');
  keepRow(r, item, rater, winner === 'a' ? condA : winner === 'b' ? condB : TIE_ID, condA, condB);
}

/** A record of the generic form: the label names the winning condition or says tie. */
function readGenericRecord(r: FileReading, item: string, rater: string): void {
  const text = readCell(r, 'label');
  if (!text) fail(r, 'label is empty');
  const label = text.toLowerCase() === 'tie' ? TIE_ID : r.values.id(text);
  let condA = -1;
  let condB = -1;
  if (r.positions.condition_a !== undefined) {
    const [a, b] = readConditions(r, 'condition_a and condition_b');
    condA = r.values.id(a);
    condB = r.values.id(b);
    if (label !== TIE_ID && label !== condA && label !== condB) fail(r, `unknown label "${text}": expected ${a}, ${b} or tie`);
  } else if (r.options.order && label !== TIE_ID && !r.options.order.includes(text)) {
    fail(r, `unknown label "${text}": expected ${r.options.order.join(', ')} or tie (from --order)`);
  }
  keepRow(r, item, rater, label, condA, condB);
}

/** Checks the record names its item and rater, then appends it to the compact rows. */
function keepRow(r: FileReading, item: string, rater: string, label: number, condA: number, condB: number): void {
  if (!item) fail(r, `${r.format === 'generic' ? 'item_id' : 'pair_id'} is empty`);
  if (!rater) fail(r, `${r.format === 'generic' ? 'rater_id' : 'judge'} is empty`);
  const { rows } = r;
  const side = readCell(r, 'left');
  rows.line.push(r.line);
  rows.item.push(r.items.id(item));
  rows.rater.push(r.raters.id(rater));
  rows.label.push(label);
  rows.condA.push(condA);
  rows.condB.push(condB);
  rows.left.push(side);
  rows.aWords.push(readCell(r, 'a_words_per_turn'));
  rows.bWords.push(readCell(r, 'b_words_per_turn'));
  rows.seconds.push(readCell(r, 'active_time_s'));
  const scenario = readCell(r, 'scenario_id');
  const category = readCell(r, 'scenario_category');
  rows.scenario.push(scenario ? r.scenarios.id(scenario) : -1);
  rows.category.push(category ? r.categories.id(category) : -1);
}

/** Fails on a file without a header, or without the question asked for. */
function checkFileHoldsQuestion(r: FileReading): void {
  const { path, options, questionsSeen } = r;
  if (r.header === null) failAt(path, 1, 'the file is empty: expected a header line with item_id, rater_id, label');
  if (options.question !== undefined && !questionsSeen.includes(options.question))
    throw new JudgmentsFileError(
      r.positions.question_id === undefined
        ? `${path} has no question_id column, so no question "${options.question}" (it holds one question)`
        : `${path} has no question "${options.question}"; its questions are: ${questionsSeen.join(', ') || '(none)'}`,
    );
}

/**
 * The conditions a and b of rows that do not name them (-1 when every row does). Without condition columns: a is
 * the condition first in alphabetical order, unless --order says otherwise.
 */
function resolveFileConditions(r: FileReading): [number, number] {
  if (r.format !== 'generic' || r.positions.condition_a !== undefined) return [-1, -1];
  const { rows, values, options } = r;
  if (options.order) return [values.id(options.order[0]), values.id(options.order[1])];
  const seen: number[] = [];
  rows.label.forEach((l, j) => {
    if (l === TIE_ID || seen.includes(l)) return;
    seen.push(l);
    if (seen.length > 2)
      failAt(r.path, rows.line[j] as number, `a third condition "${values.names[l] as string}" in a file without condition_a/condition_b columns (give them, or --order A,B for two conditions)`);
  });
  if (seen.length < 2 && rows.label.length > 0)
    failAt(
      r.path,
      2,
      seen.length === 0
        ? 'every judgment is a tie, so the labels name no condition: name both with --order A,B or condition_a/condition_b columns'
        : 'only one condition appears among the labels: name both with --order A,B or condition_a/condition_b columns',
    );
  const sorted = seen.map((l) => values.names[l] as string).sort();
  return [values.id(sorted[0] ?? 'A'), values.id(sorted[1] ?? 'B')];
}

/** Builds the column table directly from the interned rows (no second pass through strings). */
function buildTable(r: FileReading, fileA: number, fileB: number): JudgmentTable {
  const { rows, items, values } = r;
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
    else if (itemComparison[i] !== c) failAt(r.path, rows.line[j] as number, `item ${items.names[i] as string} appears with two different pairs of conditions`);
    if (itemScenario[i] === -1) itemScenario[i] = rows.scenario[j] as number;
    if (itemCategory[i] === -1) itemCategory[i] = rows.category[j] as number;
    if (Number.isNaN(itemWordsA[i])) itemWordsA[i] = rows.aWords[j] as number;
    if (Number.isNaN(itemWordsB[i])) itemWordsB[i] = rows.bWords[j] as number;
    const l = rows.label[j] as number;
    outcome[j] = l === TIE_ID ? 2 : l === a ? 0 : 1;
  }
  return {
    n,
    item: Int32Array.from(rows.item),
    rater: Int32Array.from(rows.rater),
    outcome,
    left: Int8Array.from(rows.left),
    seconds: Float64Array.from(rows.seconds),
    itemNames: items.names,
    raterNames: r.raters.names,
    itemComparison,
    itemScenario,
    itemCategory,
    itemWordsA,
    itemWordsB,
    comparisons,
    scenarioNames: r.scenarios.names,
    categoryNames: r.categories.names,
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
