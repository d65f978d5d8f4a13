import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { getBatchAnalysis } from '../analysis/analysis-cache.js';
import { awaitBatchAnalysis, writeBundleFiles } from '../analysis/background-analysis.js';
import { renderAnalysisHtml } from '../analysis/report-html.js';
import type { Db } from '../db/connection.js';
import { writeAcute } from './acute-export.js';
import { writeArena } from './arena-export.js';
import { type BundleAnalysis, writeBundle } from './bundle-export.js';
import { writeDialogues } from './dialogues-export.js';
import { type ExportContext, type ExportMeta, ExportError, buildContext, exportQuestion, openSnapshot, resolveBatch } from './export-context.js';
import {
  ARCHIVE_FORMATS,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportOptions,
  type ExportOptionsInput,
  exportOptionsSchema,
} from './export.schema.js';
import { type FileDigest, type FolderSink, archiveSink, directorySink, writeText } from './folder-sink.js';
import { writeHf } from './hf-export.js';
import { writeJudgmentsCsv, writeJudgmentsJsonl } from './judgments-export.js';
import { writePreferences } from './preferences-export.js';
import { writeSotopia } from './sotopia-export.js';
import { copyFileInto, endStream } from './stream-write.js';

// The one entry point for exports: the CLI calls exportToPath, the API and the console call writeExport with the
// HTTP response. Options are validated here, at the edge, whoever the caller is.

export { EXPORT_FORMATS, ExportError, exportOptionsSchema };
export type { ExportFormat, ExportMeta, ExportOptions, ExportOptionsInput };

/**
 * A bundle's analysis files, with what to do once the export is over, whatever happened (`release`: remove the
 * temporary folder the worker wrote them into).
 */
export type AnalysisFiles = BundleAnalysis & { release?: () => void };

/**
 * A batch's analysis files (analysis.json, report.html) of the data as of now (one question's with `question`, an id
 * already checked against the batch); null when there is no such batch. Chosen by the caller: see analysisInProcess
 * and analysisInWorker.
 */
export type AnalysisOf = (batchId: number, question: string | undefined) => Promise<AnalysisFiles | null>;

/**
 * `analysis`: what the bundle adds as analysis.json and report.html; left out, it is made by `analysisOf` (in
 * process when that is left out too); null: none. Its `release` is called when the export is over.
 */
export type ExportDeps = { now?: () => Date; analysis?: AnalysisFiles | null; analysisOf?: AnalysisOf };
export type ExportResult = { format: ExportFormat; rows: number; meta: ExportMeta; files?: FileDigest[] };

type FileWriter = (ctx: ExportContext, out: NodeJS.WritableStream) => Promise<number>;
type FolderWriter = (ctx: ExportContext, sink: FolderSink, deps: ExportDeps) => Promise<{ rows: number; files: FileDigest[] }>;

const FILE_WRITERS: Partial<Record<ExportFormat, FileWriter>> = {
  'judgments-csv': writeJudgmentsCsv,
  'judgments-jsonl': writeJudgmentsJsonl,
  arena: writeArena,
  preferences: writePreferences,
  dialogues: writeDialogues,
  sotopia: writeSotopia,
};

const FOLDER_WRITERS: Partial<Record<ExportFormat, FolderWriter>> = {
  acute: (ctx, sink) => writeAcute(ctx, sink),
  hf: (ctx, sink) => writeHf(ctx, sink),
  bundle: (ctx, sink, deps) => writeBundle(ctx, sink, deps.analysis ?? null),
};

/** Formats whose file carries its own provenance; the others get a `<file>.meta.json` sidecar on disk. */
const SELF_DESCRIBING: readonly ExportFormat[] = ['sotopia'];

const isFileFormat = (format: ExportFormat) => FILE_WRITERS[format] !== undefined;

/** Validates export options from any caller; a mistake is an ExportError (400) naming the field. */
export function parseExportOptions(input: unknown): ExportOptions {
  const parsed = exportOptionsSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') ?? '';
  throw new ExportError(field === 'format' ? (issue?.message ?? 'unknown format') : `${field || 'options'}: ${issue?.message ?? 'invalid'}`);
}

/** Checks the options and that the batch exists, before anything is written (so an API can still answer 4xx). */
export function checkExport(db: Db, input: unknown): { options: ExportOptions; batch: { id: number; name: string } } {
  const options = parseExportOptions(input);
  const batch = resolveBatch(db, options.batch);
  exportQuestion(batch, options);
  return { options, batch: { id: batch.id, name: batch.name } };
}

export function exportContentType(format: ExportFormat): string {
  if (format === 'judgments-csv') return 'text/csv; charset=utf-8';
  if (format === 'judgments-jsonl' || format === 'preferences' || format === 'dialogues') return 'application/x-ndjson; charset=utf-8';
  if (format === 'arena' || format === 'sotopia') return 'application/json; charset=utf-8';
  return 'application/zip';
}

export function exportExtension(format: ExportFormat): string {
  if (format === 'judgments-csv') return 'csv';
  if (format === 'judgments-jsonl' || format === 'preferences' || format === 'dialogues') return 'jsonl';
  if (format === 'arena' || format === 'sotopia') return 'json';
  return 'zip';
}

/** A download name with nothing but the batch id and the format: safe in a header, no user text. */
export function exportFilename(batch: { id: number }, format: ExportFormat): string {
  return `simarena-batch-${batch.id}-${format}.${exportExtension(format)}`;
}

/**
 * Streams an export to `output` (an HTTP response, a file...): single-file formats as themselves, the folder
 * formats (acute, hf, bundle) as one zip archive. Ends `output` when done; destroys it on failure so that a client
 * sees a broken download rather than a short file that looks whole. Rejects with ExportError for bad options or an
 * unknown batch before writing a byte.
 */
export async function writeExport(db: Db, input: ExportOptionsInput | ExportOptions, output: NodeJS.WritableStream, given: ExportDeps = {}): Promise<ExportResult> {
  const options = parseExportOptions(input);
  return withAnalysisReleased(db, options, given, (deps) => writeExportOf(db, options, output, deps));
}

async function writeExportOf(db: Db, options: ExportOptions, output: NodeJS.WritableStream, deps: ExportDeps): Promise<ExportResult> {
  const snapshot = openSnapshot(db);
  try {
    const ctx = buildContext(snapshot.db, options, (deps.now ?? (() => new Date()))());
    // An HTTP response gets the format's type here, last: Express's res.attachment() guesses one from the file
    // name's extension and knows none for .jsonl.
    const response = output as { headersSent?: boolean; setHeader?: (name: string, value: string) => void };
    if (response.headersSent === false && response.setHeader) response.setHeader('Content-Type', exportContentType(options.format));
    try {
      const fileWriter = FILE_WRITERS[options.format];
      if (fileWriter) {
        const rows = await fileWriter(ctx, output);
        await endStream(output);
        return { format: options.format, rows, meta: ctx.meta };
      }
      const sink = archiveSink(output, 'zip');
      const result = await (FOLDER_WRITERS[options.format] as FolderWriter)(ctx, sink, deps);
      await sink.finish();
      return { format: options.format, ...result, meta: ctx.meta };
    } catch (error) {
      (output as { destroy?: (error?: Error) => void }).destroy?.();
      throw error;
    }
  } finally {
    snapshot.close();
  }
}

/**
 * The provenance record of an export (simarena version, prompt versions, batch settings, options) without the data:
 * what the `.meta.json` sidecar holds, for an API that streams a single-file format and serves its record apart.
 */
export function buildExportMeta(db: Db, input: ExportOptionsInput | ExportOptions, deps: ExportDeps = {}): ExportMeta {
  const options = parseExportOptions(input);
  return buildContext(db, options, (deps.now ?? (() => new Date()))()).meta;
}

/**
 * The analysis computed on the caller's thread (served from analysis_cache when the batch's data has not changed),
 * rendered and pretty-printed there: for the CLI, which has no requests to keep answering.
 */
export function analysisInProcess(db: Db, now: () => Date): AnalysisOf {
  return async (batchId, question) => {
    const report = getBatchAnalysis(db, batchId, { now, question });
    if (!report) return null;
    const html = await renderAnalysisHtml(report);
    return { json: writeText(`${JSON.stringify(report, null, 2)}\n`), html: writeText(html) };
  };
}

const analysisUnavailable = () => new ExportError('The analysis for the bundle could not be computed just now; try again in a moment.', 503);

/**
 * The analysis computed in the analysis worker process (src/analysis/background-analysis.ts), for exports the server
 * runs: a million judgments' analysis would hold its request thread for seconds (issue 12). `fresh`: the worker checks
 * the stored result's data version and recomputes unless it is current, so the bundle carries the analysis of the data
 * as of the export's start, as getBatchAnalysis gives it in process. The worker then writes analysis.json and
 * report.html into a temporary folder, which the bundle copies from and `release` removes: the server never parses
 * the stored report (`served.report()` is not called), pretty-prints it or renders its HTML (14 MB at 1M judgments: its
 * peak memory went past 300 MB and its event loop stalled ~0.45 s).
 */
export function analysisInWorker(db: Db, now: () => Date): AnalysisOf {
  return async (batchId, question) => {
    const served = await awaitBatchAnalysis(db, batchId, { now, fresh: true });
    if (!served) return null;
    if (!served.stored || served.refreshFailed) throw analysisUnavailable();
    const dir = await mkdtemp(join(tmpdir(), 'simarena-bundle-'));
    const release = () => rmSync(dir, { recursive: true, force: true });
    try {
      const written = await writeBundleFiles(db, batchId, question, dir);
      if (written.kind === 'failed') process.emitWarning(`the analysis files of batch ${batchId}'s bundle could not be written: ${written.message}`);
      if (written.kind !== 'bundle-files') throw analysisUnavailable();
      return { json: (out) => copyFileInto(out, written.json), html: (out) => copyFileInto(out, written.html), release };
    } catch (error) {
      release();
      throw error;
    }
  };
}

/**
 * The bundle's analysis files, from `analysisOf` (in process when left out), made before the export's snapshot is
 * opened: the cache is written on this connection (in process) or by the worker.
 */
async function withAnalysis(db: Db, options: ExportOptions, deps: ExportDeps): Promise<ExportDeps> {
  if (options.format !== 'bundle' || deps.analysis !== undefined) return deps;
  const batch = resolveBatch(db, options.batch);
  exportQuestion(batch, options);
  const analysisOf = deps.analysisOf ?? analysisInProcess(db, deps.now ?? (() => new Date()));
  // A bundle of one question (`question` given, checked against the batch just above) carries that question's
  // analysis; otherwise every question's.
  return { ...deps, analysis: await analysisOf(batch.id, options.question) };
}

/** Runs an export with its bundle's analysis files made first (withAnalysis) and released when it is over, whatever happened. */
async function withAnalysisReleased<T>(db: Db, options: ExportOptions, given: ExportDeps, run: (deps: ExportDeps) => Promise<T>): Promise<T> {
  const deps = await withAnalysis(db, options, given);
  try {
    return await run(deps);
  } finally {
    deps.analysis?.release?.();
  }
}

/** The sidecar record of a single-file export: provenance plus the number of rows written. */
export function sidecarJson(meta: ExportMeta, rows: number): string {
  return `${JSON.stringify({ ...meta, rows }, null, 2)}\n`;
}

const FS_CODES = new Set(['EACCES', 'EPERM', 'ENOENT', 'EROFS', 'ENOSPC', 'EISDIR', 'ENOTDIR', 'EEXIST', 'ENAMETOOLONG', 'EXDEV']);

function asExportError(error: unknown, path: string): unknown {
  const code = (error as { code?: string }).code;
  if (code && FS_CODES.has(code)) return new ExportError(`cannot write ${path}: ${(error as Error).message}`);
  return error;
}

function openTemp(path: string): number {
  return openSync(path, 'wx', 0o644);
}

/** Resolves when the file is closed; a failure is reported by the awaited write, or here when nothing else saw it. */
function waitClose(stream: NodeJS.WritableStream): Promise<void> {
  const closed = new Promise<void>((resolveClose, reject) => {
    stream.once('close', resolveClose);
    stream.once('error', reject);
  });
  // On the error path nobody awaits this promise any more; keep its rejection from going unhandled.
  closed.catch(() => {});
  return closed;
}

/**
 * Writes an export to `path` for the CLI: a file (with `<path>.meta.json` beside it), a folder (acute, hf) or an
 * archive (bundle: .zip, or .tar.gz when the path ends so). Everything is written under a temporary name next to the
 * target and renamed at the end, so a failure leaves no partial file or folder behind.
 */
export async function exportToPath(db: Db, input: ExportOptionsInput | ExportOptions, path: string, given: ExportDeps = {}): Promise<ExportResult & { paths: string[] }> {
  const options = parseExportOptions(input);
  return withAnalysisReleased(db, options, given, (deps) => exportToPathOf(db, options, path, deps));
}

async function exportToPathOf(db: Db, options: ExportOptions, path: string, deps: ExportDeps): Promise<ExportResult & { paths: string[] }> {
  const target = resolve(path);
  const snapshot = openSnapshot(db);
  const temps: string[] = [];
  const streams: NodeJS.WritableStream[] = [];
  const openFile = (name: string) => {
    const file = createWriteStream('', { fd: openTemp(name) });
    streams.push(file);
    return file;
  };
  try {
    const ctx = buildContext(snapshot.db, options, (deps.now ?? (() => new Date()))());
    const parent = dirname(target);
    if (!existsSync(parent) || !statSync(parent).isDirectory()) throw new ExportError(`cannot write ${path}: the folder ${parent} does not exist`);
    const temp = join(parent, `.${basename(target)}.partial-${randomBytes(4).toString('hex')}`);
    temps.push(temp);

    if (isFileFormat(options.format)) {
      if (existsSync(target) && statSync(target).isDirectory()) throw new ExportError(`cannot write ${path}: it is a folder`, 409);
      const file = openFile(temp);
      const closed = waitClose(file);
      const rows = await (FILE_WRITERS[options.format] as FileWriter)(ctx, file);
      await endStream(file);
      await closed;
      const paths = [target];
      const metaTemp = `${temp}.meta.json`;
      if (!SELF_DESCRIBING.includes(options.format)) {
        temps.push(metaTemp);
        writeFileSync(metaTemp, sidecarJson(ctx.meta, rows), { flag: 'wx' });
      }
      renameSync(temp, target);
      if (!SELF_DESCRIBING.includes(options.format)) {
        renameSync(metaTemp, `${target}.meta.json`);
        paths.push(`${target}.meta.json`);
      }
      return { format: options.format, rows, meta: ctx.meta, paths };
    }

    if (ARCHIVE_FORMATS.includes(options.format)) {
      const kind = /\.(tar\.gz|tgz)$/i.test(target) ? 'tar.gz' : 'zip';
      const file = openFile(temp);
      const closed = waitClose(file);
      const sink = archiveSink(file, kind);
      const result = await (FOLDER_WRITERS[options.format] as FolderWriter)(ctx, sink, deps);
      await sink.finish();
      await closed;
      renameSync(temp, target);
      return { format: options.format, ...result, meta: ctx.meta, paths: [target] };
    }

    // A folder format: the target may be new or an empty folder, never one with someone's files in it.
    if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0))
      throw new ExportError(`cannot write ${path}: it already exists and is not an empty folder`, 409);
    mkdirSync(temp);
    const result = await (FOLDER_WRITERS[options.format] as FolderWriter)(ctx, directorySink(temp), deps);
    if (existsSync(target)) rmdirSync(target);
    renameSync(temp, target);
    return { format: options.format, ...result, meta: ctx.meta, paths: [target] };
  } catch (error) {
    for (const stream of streams) (stream as { destroy?: () => void }).destroy?.();
    for (const temp of temps) rmSync(temp, { recursive: true, force: true });
    throw asExportError(error, path);
  } finally {
    snapshot.close();
  }
}

