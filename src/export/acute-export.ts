import { type SignificanceRow, SIGNIFICANCE_COLUMNS, createAcuteAccumulator } from './acute-tables.js';
import type { ExportContext } from './export-context.js';
import { iteratePairVotes } from './export.queries.js';
import { type FileDigest, type FolderSink, writeText } from './folder-sink.js';
import { csvLine } from './stream-write.js';

export function acuteTables(ctx: ExportContext) {
  const acc = createAcuteAccumulator(ctx.meta.question?.text ?? ctx.batch.settings.question);
  let pairs = 0;
  for (const row of iteratePairVotes(ctx.db, ctx.scope)) {
    acc.add({ model1: row.condition_a, model2: row.condition_b, wins1: row.votes_a, wins2: row.votes_b, ties: row.votes_tie });
    pairs++;
  }
  return { significance: acc.significance(), grid: acc.grid(), pairs };
}

export function significanceCsv(rows: SignificanceRow[]): string {
  return [csvLine([...SIGNIFICANCE_COLUMNS]), ...rows.map((row) => csvLine(SIGNIFICANCE_COLUMNS.map((c) => row[c])))].join('');
}

export function gridCsv(grid: { models: string[]; cells: (number | null)[][] }): string {
  return [csvLine(['loser', ...grid.models]), ...grid.models.map((loser, i) => csvLine([loser, ...(grid.cells[i] ?? [])]))].join('');
}

/** significance.csv, grid.csv and meta.json (the simarena version, prompt versions and batch settings). */
export async function writeAcute(ctx: ExportContext, sink: FolderSink): Promise<{ rows: number; files: FileDigest[] }> {
  const tables = acuteTables(ctx);
  const files = [
    await sink.file('significance.csv', writeText(significanceCsv(tables.significance))),
    await sink.file('grid.csv', writeText(gridCsv(tables.grid))),
    await sink.file('meta.json', writeText(`${JSON.stringify({ ...ctx.meta, pairs: tables.pairs }, null, 2)}\n`)),
  ];
  return { rows: tables.significance.length, files };
}
