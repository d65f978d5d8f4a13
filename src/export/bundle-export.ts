import { writeDialogues } from './dialogues-export.js';
import type { ExportContext } from './export-context.js';
import { listBatchRuns } from './export.queries.js';
import { type FileDigest, type FolderSink, writeText } from './folder-sink.js';
import { writeJudgmentsCsv } from './judgments-export.js';
import { runCard } from './simulation-cards.js';

/** Writes one file's content to `out`, waiting for it to drain when its buffer is full (FolderSink.file's writer). */
export type ContentWriter = (out: NodeJS.WritableStream) => Promise<void>;

/**
 * What the bundle adds from the analysis module: analysis.json (the report pretty-printed) and report.html, each as
 * a writer: from strings when the analysis is computed in process (the CLI), from files the analysis worker wrote when
 * the server exports (src/export/export-batch.ts), so the server never holds or renders a large report.
 */
export type BundleAnalysis = { json: ContentWriter; html: ContentWriter };

/**
 * The whole batch in one archive: judgments, dialogues, simulation cards, the analysis (when given) and a manifest
 * with every file's size and SHA-256 so a reader can check nothing was altered or lost.
 */
export async function writeBundle(ctx: ExportContext, sink: FolderSink, analysis: BundleAnalysis | null): Promise<{ rows: number; files: FileDigest[] }> {
  let judgments = 0;
  let dialogues = 0;
  const files: FileDigest[] = [];
  files.push(
    await sink.file('judgments.csv', async (out) => {
      judgments = await writeJudgmentsCsv(ctx, out);
    }),
  );
  files.push(
    await sink.file('dialogues.jsonl', async (out) => {
      dialogues = await writeDialogues(ctx, out);
    }),
  );
  for (const run of listBatchRuns(ctx.db, ctx.batch.id)) {
    const card = runCard(ctx.db, run);
    files.push(await sink.file(`simulation-cards/run-${run.id}.json`, writeText(`${JSON.stringify(card.card, null, 2)}\n`)));
    files.push(await sink.file(`simulation-cards/run-${run.id}.md`, writeText(card.markdown)));
  }
  if (analysis) {
    files.push(await sink.file('analysis.json', analysis.json));
    files.push(await sink.file('report.html', analysis.html));
  }
  const manifest = {
    ...ctx.meta,
    rows: { judgments, dialogues },
    analysis_included: analysis !== null,
    files,
  };
  await sink.file('manifest.json', writeText(`${JSON.stringify(manifest, null, 2)}\n`));
  return { rows: judgments, files };
}
