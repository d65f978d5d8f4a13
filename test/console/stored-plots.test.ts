// Migration 026: the analysis worker draws the console's plots from each report it stores, in the same transaction, and
// the plot route serves them as stored; it draws a plot itself only when none is stored for the report it serves.
import type { Test } from 'supertest';
import { describe, expect, it } from 'vitest';
import { readStoredReport } from '../../src/analysis/stored-report.js';
import { awaitBatchAnalysis } from '../../src/analysis/background-analysis.js';
import { renderPlot } from '../../src/analysis/plots.js';
import { selectQuestionReport } from '../../src/analysis/question-reports.js';
import type { Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { makeTwoQuestionBatch } from '../analysis/two-question-fixture.js';
import { makeBatchWithJudgments, makeJudgment } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';
import { storedAnalysisValue } from '../helpers/stored-analysis.js';

type PlotRow = { question: string; name: string; data_version: string; svg: string };
const plotRows = (db: Db, batchId: number) =>
  db.prepare('SELECT question, name, data_version, svg FROM analysis_plots WHERE batch_id = ? ORDER BY question, name').all(batchId) as PlotRow[];
const storedVersion = (db: Db, batchId: number) => db.prepare('SELECT data_version FROM analysis_cache WHERE batch_id = ?').pluck().get(batchId) as string;
const svgOf = async (agent: { get: (url: string) => Test }, url: string) =>
  String((await agent.get(url).buffer(true).parse((res, cb) => {
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString()));
    res.on('end', () => cb(null, body));
  })).body);

describe('stored plots', () => {
  it('a stored analysis comes with its five plots of the same version, which the plot route serves as stored; a plot stored for another version is drawn anew', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['a', 'a', 'b'], ['b', 'a', 'a']] });
    const researcher = await signIn(t.app, t.db, 'researcher');
    await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    const version = storedVersion(t.db, batch.batchId);
    const rows = plotRows(t.db, batch.batchId);
    expect(rows.map((r) => r.name)).toEqual(['forest', 'position-bias', 'rater-quality', 'verbosity', 'win-rate']);
    expect(rows.every((r) => r.question === '' && r.data_version === version && r.svg.includes('<svg'))).toBe(true);

    // Drawn from the stored report: the same SVG the console would draw from it.
    const report = readStoredReport(storedAnalysisValue(t.db, batch.batchId)!);
    expect(report).not.toBeNull();
    expect(rows.find((r) => r.name === 'win-rate')?.svg).toBe(await renderPlot(report!, 'win-rate'));

    // Served as stored, not drawn again.
    const url = `/console/batches/${batch.batchId}/plots/forest.svg`;
    expect(await svgOf(researcher.agent, url)).toBe(rows.find((r) => r.name === 'forest')?.svg);
    t.db.prepare("UPDATE analysis_plots SET svg = '<svg><!-- as stored --></svg>' WHERE batch_id = ? AND name = 'forest'").run(batch.batchId);
    expect(await svgOf(researcher.agent, url)).toBe('<svg><!-- as stored --></svg>');

    // Of another report: not served; the route draws the plot of the report it serves.
    t.db.prepare("UPDATE analysis_plots SET data_version = 'an older one' WHERE batch_id = ?").run(batch.batchId);
    expect(await svgOf(researcher.agent, url)).toBe(await renderPlot(report!, 'forest'));
  });

  it('a new judgment makes a new report whose plots replace the old ones in the same write', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b'], ['a', null]] });
    const now = () => new Date();
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const before = plotRows(t.db, batch.batchId);
    makeJudgment(t.db, { pairId: batch.pairIds[1]!, raterId: batch.raterIds[1]!, winner: 'b' });
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const after = plotRows(t.db, batch.batchId);
    expect(after).toHaveLength(5);
    expect(after.every((r) => r.data_version === storedVersion(t.db, batch.batchId))).toBe(true);
    expect(after[0]?.data_version).not.toBe(before[0]?.data_version);
    expect(after.find((r) => r.name === 'win-rate')?.svg).not.toBe(before.find((r) => r.name === 'win-rate')?.svg);
  });

  it('a batch of two questions has each question\'s five plots, and ?question= serves that question\'s', async () => {
    const t = buildTestApp();
    const made = makeTwoQuestionBatch(t.db);
    const researcher = await signIn(t.app, t.db, 'researcher');
    await researcher.agent.get(`/console/batches/${made.batchId}/analysis`).expect(200);
    const rows = plotRows(t.db, made.batchId);
    expect(rows.map((r) => `${r.question}/${r.name}`)).toEqual(
      ['goals', 'natural'].flatMap((q) => ['forest', 'position-bias', 'rater-quality', 'verbosity', 'win-rate'].map((n) => `${q}/${n}`)),
    );
    const report = readStoredReport(storedAnalysisValue(t.db, made.batchId)!)!;
    const goals = await svgOf(researcher.agent, `/console/batches/${made.batchId}/plots/win-rate.svg?question=goals`);
    const first = await svgOf(researcher.agent, `/console/batches/${made.batchId}/plots/win-rate.svg`);
    expect(goals).toBe(await renderPlot(selectQuestionReport(report, 'goals'), 'win-rate'));
    expect(first).toBe(await renderPlot(selectQuestionReport(report, 'natural'), 'win-rate'));
    expect(goals).not.toBe(first);
  });
});
