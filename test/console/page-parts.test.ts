// Migration 028: with each report the analysis worker stores what the console's pages read of it — a page report (its
// per-rater array cut to the raters the analysis page shows) and each rater's figures as rows — so that no page parses
// the whole report on the request thread (issue 12). A page renders the same from them as from the whole report, reads
// them rather than it, never mixes two results, and serves a row stored without them through the whole report.
import { gunzipSync, gzipSync } from 'node:zlib';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { analysisVersion, computeBatchAnalysis, getBatchAnalysis, storeAnalysis } from '../../src/analysis/analysis-cache.js';
import { DEFAULT_BOOTSTRAP, DEFAULT_SEED } from '../../src/analysis/analyze.js';
import { compressReport } from '../../src/analysis/stored-report.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { tempDir } from '../helpers/test-db.js';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { awaitBatchAnalysis, serveBatchAnalysis, storedReportParsed } from '../../src/analysis/background-analysis.js';
import { pageReportOf, type RaterFiguresRow, RATERS_TABLE_ROWS } from '../../src/analysis/page-report.js';
import { planFigureChanges } from '../../src/analysis/rater-figures-plan.js';
import { applyFigureChanges, listStoredFigureRows } from '../../src/analysis/rater-figures.queries.js';
import { qualityFlags } from '../../src/analysis/rater-quality.js';
import { decideParticipant } from '../../src/recruiting/participant-decision.js';
import { qualityStateOf } from '../../src/recruiting/rater-quality-lookup.js';
import { countQualityDecisions } from '../../src/console/rater-table.queries.js';
import { createApp } from '../../src/app.js';
import { getBatchRow } from '../../src/batches/batch.queries.js';
import { judgePseudonym } from '../../src/rating/judge-pseudonym.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/connection.js';
import { signIn } from '../auth/session-helpers.js';
import { makeBatch, makeBatchWithJudgments, makeJudgment, makeRater } from '../helpers/factories.js';
import { storedAnalysis } from '../helpers/stored-analysis.js';
import { buildTestApp, TEST_SECRET } from '../helpers/test-app.js';

const NOW = new Date('2026-05-01T12:00:00Z');
const clock = () => NOW;

/**
 * A batch of 230 raters (more than the analysis page's Raters table shows) with different numbers of judgments, fast
 * and slow, left- and right-leaning, all completed: every figure and flag the pages show depends on the stored figures.
 */
function makeRatedBatch(db: Db) {
  const raters = RATERS_TABLE_ROWS + 30;
  const votes = Array.from({ length: 6 }, (_, pair) =>
    Array.from({ length: raters }, (_, r) => ((r + pair) % (2 + (r % 4)) === 0 ? null : (r * 7 + pair * 3) % 5 < 3 ? ('a' as const) : ('b' as const))),
  );
  const batch = makeBatchWithJudgments(db, { votes });
  db.prepare("UPDATE raters SET status = 'completed', finish_reason = 'cap' WHERE batch_id = ?").run(batch.batchId);
  db.prepare('UPDATE judgments SET active_ms = CASE WHEN rater_id % 3 = 0 THEN 2000 ELSE 20000 + 500 * (rater_id % 11) END WHERE batch_id = ?').run(batch.batchId);
  // Half the raters with their pseudonym stored at consent (migration 023), half from before (named by the console).
  const salt = getBatchRow(db, batch.batchId)?.judge_salt ?? '';
  const rows = db.prepare('SELECT id, provider, participant_id, public_id FROM raters WHERE batch_id = ? AND id % 2 = 0').all(batch.batchId) as {
    id: number;
    provider: string;
    participant_id: string | null;
    public_id: string;
  }[];
  for (const r of rows) {
    db.prepare('UPDATE raters SET judge = ? WHERE id = ?').run(judgePseudonym(salt, { provider: r.provider, participantId: r.participant_id, raterPublicId: r.public_id }), r.id);
  }
  // Every fifth rater always on the left (one side), every seventh finished when the batch closed.
  db.prepare("UPDATE judgments SET left_side = winner, choice = 'left' WHERE batch_id = ? AND winner IN ('a', 'b') AND rater_id % 5 = 0").run(batch.batchId);
  db.prepare("UPDATE raters SET finish_reason = 'closed' WHERE batch_id = ? AND id % 7 = 0").run(batch.batchId);
  return batch;
}

/** A page's main content without what differs between two views of one result (its age, "updating", CSRF tokens). */
function mainOf(html: string): string {
  const main = /<main id="main">([\s\S]*)<\/main>/.exec(html)?.[1] ?? '';
  return main
    .replace(/<span data-testid="analysis-age">[\s\S]*?<\/span>/g, '')
    .replace(/<p class="muted" data-testid="quality-age">[\s\S]*?<\/p>/g, '')
    .replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf"');
}

const pageUrls = (batchId: number) => [
  `/console/batches/${batchId}/analysis`,
  `/console/batches/${batchId}/raters`,
  `/console/batches/${batchId}/raters?page=2`,
  `/console/batches/${batchId}/participants`,
  `/console/batches/${batchId}/participants?page=3&per_page=50`,
];

/** The batch's figure rows of result `parts` (migration 032: from_parts <= parts < to_parts), in pseudonym order. */
const figureRows = (db: Db, batchId: number, parts: number | null) =>
  db
    .prepare(
      `SELECT judge, judgments, median_seconds, majority_agreement, left_rate FROM analysis_rater_figures
       WHERE batch_id = ? AND from_parts <= ? AND to_parts > ? ORDER BY judge`,
    )
    .all(batchId, parts, parts) as RaterFiguresRow[];
/** Every stored figure row of the batch, of whichever result. */
const allFigureRows = (db: Db, batchId: number) =>
  db.prepare('SELECT judge, from_parts, to_parts, judgments FROM analysis_rater_figures WHERE batch_id = ? ORDER BY judge, from_parts').all(batchId) as {
    judge: string;
    from_parts: number;
    to_parts: number;
    judgments: number;
  }[];
const storedRow = (db: Db, batchId: number) =>
  db.prepare('SELECT data_version, computed_at, page_report, parts_id FROM analysis_cache WHERE batch_id = ?').get(batchId) as {
    data_version: string;
    computed_at: string;
    page_report: Buffer | null;
    parts_id: number | null;
  };
const storedPageReport = (db: Db, batchId: number) => JSON.parse(gunzipSync(storedRow(db, batchId).page_report as Buffer).toString('utf8')) as AnalysisReport;

/** A second server process's view of the same database file: its own handle, so its own memory of stored results. */
function secondApp(path: string) {
  const db = openDatabase(path);
  const config = loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent' });
  const app = createApp({ db, config, logger: pino({ level: 'silent' }), sessionSecret: TEST_SECRET, clock });
  return { app, db };
}

describe('the console pages read the stored page parts of the analysis, not the whole report', () => {
  it('GET the analysis, raters and participants pages and the payment CSV, for a result stored with its page parts, show what they show from the whole report, without parsing it', async () => {
    const t = buildTestApp({ clock });
    const batch = makeRatedBatch(t.db);
    await awaitBatchAnalysis(t.db, batch.batchId, { now: clock, fresh: true });
    const whole = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    expect(whole.raters.length).toBe(RATERS_TABLE_ROWS + 30);

    // Stored beside the report: the page report (raters cut, their number kept) and one figure row per rater, of its version.
    const row = storedRow(t.db, batch.batchId);
    const page = storedPageReport(t.db, batch.batchId);
    expect(page).toEqual(pageReportOf(whole));
    expect(page.raters.length).toBeLessThanOrEqual(RATERS_TABLE_ROWS + 2);
    expect(page.raters_total).toBe(whole.raters.length);
    expect(page.raters.length).toBeLessThan(whole.raters.length);
    expect(row.parts_id).not.toBeNull();
    const figures = figureRows(t.db, batch.batchId, row.parts_id);
    expect(figures).toHaveLength(whole.raters.length);
    expect(allFigureRows(t.db, batch.batchId)).toHaveLength(whole.raters.length);
    const first = whole.raters[0]!;
    expect(figures.find((f) => f.judge === first.rater)).toEqual({
      judge: first.rater, judgments: first.judgments, median_seconds: first.median_seconds, majority_agreement: first.loo_agreement, left_rate: first.left_rate,
    });

    const admin = await signIn(t.app, t.db, 'admin');
    const fromParts: string[] = [];
    for (const url of pageUrls(batch.batchId)) fromParts.push((await admin.agent.get(url).expect(200)).text);
    const csvFromParts = (await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=full`).expect(200)).text;
    expect(storedReportParsed(t.db, batch.batchId)).toBe(false);
    // The pages say something worth comparing: the flags and the Raters table's cut.
    expect(fromParts[0]).toContain(`The first ${RATERS_TABLE_ROWS} of ${whole.raters.length} raters by number of judgments`);
    expect(fromParts[1]).toContain('too fast');
    expect(fromParts[1]).toContain('one side');
    expect(fromParts[3]).toMatch(/data-testid="count-approve">[1-9]/);
    expect(fromParts[3]).toMatch(/data-testid="count-review">[1-9]/);

    // The same result without its parts (as a row stored before migration 028), served by another server process.
    t.db.prepare('UPDATE analysis_cache SET page_report = NULL, parts_id = NULL WHERE batch_id = ?').run(batch.batchId);
    t.db.prepare('DELETE FROM analysis_rater_figures WHERE batch_id = ?').run(batch.batchId);
    const other = secondApp(t.dbPath);
    const otherAdmin = await signIn(other.app, other.db, 'admin');
    for (const [i, url] of pageUrls(batch.batchId).entries()) {
      const fromWhole = (await otherAdmin.agent.get(url).expect(200)).text;
      expect(mainOf(fromWhole), url).toBe(mainOf(fromParts[i]!));
    }
    expect((await otherAdmin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=full`).expect(200)).text).toBe(csvFromParts);
    expect(storedReportParsed(other.db, batch.batchId)).toBe(true);
    other.db.close();
  });

  it('GET the analysis, raters and participants pages, when the stored parts say otherwise than the whole report (a test-only row), show the parts\' figures', async () => {
    const t = buildTestApp({ clock });
    const batch = makeRatedBatch(t.db);
    await awaitBatchAnalysis(t.db, batch.batchId, { now: clock, fresh: true });
    const whole = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    const slow = whole.raters.find((r) => r.median_seconds !== null && r.median_seconds > 10)!;
    // Parts unlike the whole report: another note, and one rater 1234.5 s slow who agrees with nobody, in a row read anew.
    const page = { ...storedPageReport(t.db, batch.batchId), notes: ['Read from the page report.'] };
    t.db
      .prepare("UPDATE analysis_cache SET page_report = ?, computed_at = '2026-05-01T11:59:00.000Z' WHERE batch_id = ?")
      .run(gzipSync(JSON.stringify(page)), batch.batchId);
    t.db.prepare('UPDATE analysis_rater_figures SET median_seconds = 1234.5, majority_agreement = 0 WHERE batch_id = ? AND judge = ?').run(batch.batchId, slow.rater);
    const admin = await signIn(t.app, t.db, 'admin');

    const analysis = (await admin.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200)).text;
    expect(analysis).toContain('Read from the page report.');
    expect(analysis).not.toContain(whole.notes[0] ?? 'no note');
    const raters = (await admin.agent.get(`/console/batches/${batch.batchId}/raters?per_page=500`).expect(200)).text;
    const cells = raters.split('<tr').find((row) => row.includes(slow.rater)) ?? '';
    expect(cells).toContain('1234.5 s');
    expect(cells).toContain('<td>0%</td>');
    const csv = (await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=full`).expect(200)).text;
    expect(csv).toContain(slow.rater);
    expect(storedReportParsed(t.db, batch.batchId)).toBe(false);
    // The API still sends the whole report, as stored.
    expect(storedAnalysis<AnalysisReport>(t.db, batch.batchId).notes).toEqual(whole.notes);
  });

  it('a new result replaces the stored parts with its own when it is stored, and parts read for a result replaced meanwhile are refused, never mixed', async () => {
    const t = buildTestApp();
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['a', 'a', null]] });
    const now = () => new Date();
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const before = storedRow(t.db, batch.batchId);
    const served = serveBatchAnalysis(t.db, batch.batchId, { now })!;
    expect(served.pageParts).toBe(true);
    expect(served.readParts((partsId) => partsId)).toBe(before.parts_id);

    makeJudgment(t.db, { pairId: batch.pairIds[1]!, raterId: batch.raterIds[2]!, winner: 'b' });
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const after = storedRow(t.db, batch.batchId);
    expect(after.data_version).not.toBe(before.data_version);
    expect(after.parts_id).not.toBe(before.parts_id);
    const whole = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    expect(storedPageReport(t.db, batch.batchId)).toEqual(pageReportOf(whole));
    const figures = figureRows(t.db, batch.batchId, after.parts_id);
    expect(figures.map((f) => [f.judge, f.judgments]).sort()).toEqual(whole.raters.map((r) => [r.rater, r.judgments]).sort());
    // What was served before the new result was stored reads nothing of it.
    expect(served.readParts(() => 'read')).toBeNull();
  });

  it('a new result writes only the rater figures that changed: the other raters\' rows serve both results, and the rows it replaced go once it is stored', async () => {
    const t = buildTestApp();
    const batch = makeRatedBatch(t.db);
    const now = () => new Date();
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const first = storedRow(t.db, batch.batchId).parts_id!;
    const before = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    expect(allFigureRows(t.db, batch.batchId).every((f) => f.from_parts === first)).toBe(true);

    // One more judgment, by a rater who had skipped a pair.
    const missing = t.db
      .prepare('SELECT r.id AS rater, p.id AS pair FROM raters r, pairs p WHERE r.batch_id = ? AND p.batch_id = r.batch_id AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.rater_id = r.id AND j.pair_id = p.id) LIMIT 1')
      .get(batch.batchId) as { rater: number; pair: number };
    makeJudgment(t.db, { pairId: missing.pair, raterId: missing.rater, winner: 'b' });
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const second = storedRow(t.db, batch.batchId).parts_id!;
    expect(second).toBeGreaterThan(first);
    const after = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    const figuresOf = (r: AnalysisReport['raters'][number]) => ({ judge: r.rater, judgments: r.judgments, median_seconds: r.median_seconds, majority_agreement: r.loo_agreement, left_rate: r.left_rate });
    expect(figureRows(t.db, batch.batchId, second)).toEqual(after.raters.map(figuresOf).sort((a, b) => (a.judge < b.judge ? -1 : 1)));

    // Rewritten: exactly the raters whose figures differ between the two reports (the new judgment's rater among them), a few of 230.
    const old = new Map(before.raters.map((r) => [r.rater, JSON.stringify(figuresOf(r))]));
    const changed = after.raters.filter((r) => old.get(r.rater) !== JSON.stringify(figuresOf(r))).map((r) => r.rater);
    const rows = allFigureRows(t.db, batch.batchId);
    expect(rows.filter((f) => f.from_parts === second).map((f) => f.judge)).toEqual([...changed].sort());
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(after.raters.length / 4);
    expect(rows.filter((f) => f.from_parts === first)).toHaveLength(after.raters.length - changed.length);
    // Nothing left of the first result's replaced rows: one row per rater.
    expect(rows).toHaveLength(after.raters.length);
    const admin = await signIn(t.app, t.db, 'admin');
    const csv = (await admin.agent.get(`/console/batches/${batch.batchId}/participants.csv?form=full`).expect(200)).text;
    expect(csv.trim().split('\n')).toHaveLength(after.raters.length + 1);
  });

  it('a result whose worker died while writing its figures is cleared by the next one, and one another process is writing now is left to it', async () => {
    const t = buildTestApp();
    const batch = makeRatedBatch(t.db);
    const now = () => new Date();
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const stored = storedRow(t.db, batch.batchId);
    const whole = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    const [kept, closed] = [whole.raters[0]!.rater, whole.raters[1]!.rater];
    const dead = stored.parts_id! + 1;
    // A job that claimed the next result, last wrote three minutes ago and died after closing one rater's row and writing another's.
    t.db.prepare('UPDATE analysis_figures_writer SET last_parts = ?, written_at = ? WHERE batch_id = ?').run(dead, Date.now() - 3 * 60_000, batch.batchId);
    t.db.prepare('UPDATE analysis_rater_figures SET to_parts = ? WHERE batch_id = ? AND judge = ?').run(dead, batch.batchId, closed);
    t.db.prepare('UPDATE analysis_rater_figures SET to_parts = ? WHERE batch_id = ? AND judge = ?').run(dead, batch.batchId, kept);
    t.db
      .prepare('INSERT INTO analysis_rater_figures (batch_id, judge, from_parts, to_parts, judgments, median_seconds) VALUES (?, ?, ?, ?, 1, 999)')
      .run(batch.batchId, kept, dead, Number.MAX_SAFE_INTEGER);
    // The stored result still reads its own figures, both raters' among them, once each.
    expect(figureRows(t.db, batch.batchId, stored.parts_id).map((f) => f.judge)).toEqual(whole.raters.map((r) => r.rater).sort());

    makeJudgment(t.db, { pairId: batch.pairIds[0]!, raterId: batch.raterIds[0]!, winner: 'a' });
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    const next = storedRow(t.db, batch.batchId);
    expect(next.parts_id).toBeGreaterThan(dead);
    const report = storedAnalysis<AnalysisReport>(t.db, batch.batchId);
    const figures = figureRows(t.db, batch.batchId, next.parts_id);
    expect(figures.map((f) => f.judge)).toEqual(report.raters.map((r) => r.rater).sort());
    expect(figures.some((f) => f.median_seconds === 999)).toBe(false);
    expect(allFigureRows(t.db, batch.batchId)).toHaveLength(report.raters.length);
    expect(t.db.prepare('SELECT written_at FROM analysis_figures_writer WHERE batch_id = ?').pluck().get(batch.batchId)).toBeNull();

    // Another process's worker writing this batch's figures since a moment ago: this one stores nothing and serves the stored result.
    t.db.prepare('UPDATE analysis_figures_writer SET last_parts = last_parts + 1, written_at = ? WHERE batch_id = ?').run(Date.now(), batch.batchId);
    makeJudgment(t.db, { pairId: batch.pairIds[2]!, raterId: batch.raterIds[0]!, winner: 'b' });
    const served = await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    expect(served?.refreshFailed).toBeUndefined();
    expect(storedRow(t.db, batch.batchId)).toEqual(next);
    expect(allFigureRows(t.db, batch.batchId)).toHaveLength(report.raters.length);
    // Once it is done (here: gone without storing), the next refresh stores the newer result.
    t.db.prepare('UPDATE analysis_figures_writer SET written_at = NULL WHERE batch_id = ?').run(batch.batchId);
    await awaitBatchAnalysis(t.db, batch.batchId, { now, fresh: true });
    expect(storedRow(t.db, batch.batchId).data_version).not.toBe(next.data_version);
    expect(storedAnalysis<AnalysisReport>(t.db, batch.batchId).n_judgments).toBe(report.n_judgments + 1);
  });

  it('migration 032 drops the figures of results stored before it: those are served whole, then computed again with the figures in their new form', async () => {
    const path = join(tempDir(), 'old.db');
    const old = openDatabase(path);
    const all = listMigrations();
    migrate(
      old,
      all.filter((m) => m.version < 32),
    );
    const batch = makeBatchWithJudgments(old, { votes: [['a', 'b', 'a'], ['b', 'a', null]] });
    // Today's analysis stands in for the older version's report. It reads columns of later migrations, so it runs on
    // a fully migrated copy of the same rows; the old file itself stays as it was before 032.
    const copyPath = join(tempDir(), 'old-migrated.db');
    old.exec(`VACUUM INTO '${copyPath}'`);
    const copy = openDatabase(copyPath);
    migrate(copy, all);
    const settings = { seed: DEFAULT_SEED, bootstrap: DEFAULT_BOOTSTRAP, targetHalfWidth: 0.05 };
    const report = computeBatchAnalysis(copy, batch.batchId, { ...settings, now: NOW })!;
    const version = analysisVersion(copy, batch.batchId, settings);
    copy.close();
    storeAnalysis(old, batch.batchId, version, compressReport(JSON.stringify(report)), NOW, { report: compressReport(JSON.stringify(pageReportOf(report))), id: 77 });
    const figures = old.prepare('INSERT INTO analysis_rater_figures (batch_id, parts_id, judge, judgments) VALUES (?, 77, ?, ?)');
    for (const r of report.raters) figures.run(batch.batchId, r.rater, r.judgments);
    migrate(old, all);
    expect(storedRow(old, batch.batchId)).toMatchObject({ parts_id: null, data_version: 'before migration 032' });
    expect(allFigureRows(old, batch.batchId)).toEqual([]);
    old.close();

    const { app, db } = secondApp(path);
    const admin = await signIn(app, db, 'admin');
    const raters = (await admin.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200)).text;
    for (const r of report.raters) expect(raters).toContain(r.rater);
    expect(storedReportParsed(db, batch.batchId)).toBe(true);
    await awaitBatchAnalysis(db, batch.batchId, { now: clock, fresh: true });
    const stored = storedRow(db, batch.batchId);
    expect(stored.data_version).toBe(version);
    expect(figureRows(db, batch.batchId, stored.parts_id).map((f) => [f.judge, f.judgments])).toEqual(report.raters.map((r) => [r.rater, r.judgments]).sort());
    db.close();
  });

  it('GET the raters page and the plot route, for a row stored without page parts (in process, as before migration 028) beside figure rows of an older result, read the whole report and not those rows', async () => {
    const t = buildTestApp({ clock });
    const batch = makeBatchWithJudgments(t.db, { votes: [['a', 'b', 'a'], ['b', 'a', null]] });
    await awaitBatchAnalysis(t.db, batch.batchId, { now: clock, fresh: true });
    const oldParts = storedRow(t.db, batch.batchId).parts_id;
    const old = figureRows(t.db, batch.batchId, oldParts);
    t.db.prepare('UPDATE analysis_rater_figures SET median_seconds = 999 WHERE batch_id = ?').run(batch.batchId);
    makeJudgment(t.db, { pairId: batch.pairIds[1]!, raterId: batch.raterIds[2]!, winner: 'a' });
    // Stored in process (the CLI's path): the report alone, without parts; the worker's rows stay, of the old result.
    const report = getBatchAnalysis(t.db, batch.batchId, { now: new Date('2026-05-01T11:00:00Z') })!;
    expect(storedRow(t.db, batch.batchId).page_report).toBeNull();
    expect(storedRow(t.db, batch.batchId).parts_id).toBeNull();
    expect(figureRows(t.db, batch.batchId, oldParts).map((f) => f.judge)).toEqual(old.map((f) => f.judge));

    const researcher = await signIn(t.app, t.db, 'researcher');
    const raters = (await researcher.agent.get(`/console/batches/${batch.batchId}/raters`).expect(200)).text;
    expect(raters).not.toContain('999.0 s');
    for (const r of report.raters) if (r.median_seconds !== null) expect(raters).toContain(`${r.median_seconds.toFixed(1)} s`);
    expect(storedReportParsed(t.db, batch.batchId)).toBe(true);
    const analysis = (await researcher.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200)).text;
    expect(analysis).toContain(`${report.n_judgments} judgments on 2 pairs`);
    const plot = await researcher.agent.get(`/console/batches/${batch.batchId}/plots/win-rate.svg`).expect(200);
    expect(plot.headers['content-type']).toContain('image/svg+xml');
  });
  it('countQualityDecisions, for raters in every case of the payment rule (too fast, one side, figures pending, closed, nothing left), counts what decideParticipant decides from the same figures', () => {
    const t = buildTestApp();
    const { batchId } = makeBatch(t.db, {});
    const partsId = 41;
    // [finish reason, regular judgments, stored figures or null]: each row one case of decideParticipant after its checks.
    const cases: [string | null, number, { judgments: number; median_seconds: number | null; majority_agreement: number | null; left_rate: number | null; decisive?: number | null } | null][] = [
      ['cap', 10, { judgments: 10, median_seconds: 4.5, majority_agreement: 0.8, left_rate: 0.5 }], // too fast (under 5 s)
      ['cap', 10, { judgments: 10, median_seconds: 9, majority_agreement: 0.8, left_rate: 0.5 }], // too fast when the batch's median is over 27 s
      ['cap', 10, { judgments: 10, median_seconds: 11, majority_agreement: 0.8, left_rate: 0.5 }], // approve
      ['cap', 10, { judgments: 10, median_seconds: 20, majority_agreement: 0.8, left_rate: 0.95 }], // one side
      ['cap', 4, { judgments: 4, median_seconds: 20, majority_agreement: 0.8, left_rate: 1 }], // too few judgments for one side
      ['cap', 7, { judgments: 7, decisive: 3, median_seconds: 20, majority_agreement: 0.8, left_rate: 1 }], // three decisive and four ties: not one side (issue 51)
      ['cap', 10, { judgments: 10, median_seconds: null, majority_agreement: null, left_rate: 0.05 }], // one side, no time
      ['cap', 3, null], // pending: judgments the stored result does not hold
      ['closed', 5, { judgments: 5, median_seconds: 40, majority_agreement: 1, left_rate: 0.5 }], // approve (batch closed)
      ['paused', 0, null], // approve (batch paused), nothing analysed
      ['exhausted', 0, null], // review: completed without a regular judgment
      [null, 0, null], // approve: finished before finish reasons were recorded
    ];
    const figures: { judge: string; judgments: number; median_seconds: number | null; majority_agreement: number | null; left_rate: number | null }[] = [];
    for (const [i, [finish, regular, stored]] of cases.entries()) {
      const id = makeRater(t.db, { batchId, status: 'completed' });
      const judge = `judge-${i}`;
      t.db.prepare('UPDATE raters SET judge = ?, finish_reason = ?, regular_judged = ? WHERE id = ?').run(judge, finish, regular, id);
      if (stored) figures.push({ judge, ...stored });
    }
    // A rater from before pseudonyms were stored is left to the caller; figures of another result are not read.
    makeRater(t.db, { batchId, status: 'completed' });
    applyFigureChanges(t.db, batchId, partsId, planFigureChanges([], null, figures));
    const next = figures.map((f) => ({ ...f, median_seconds: 1 }));
    applyFigureChanges(t.db, batchId, partsId + 1, planFigureChanges(listStoredFigureRows(t.db, batchId), partsId, next));

    const checksPassed = { attentionFailures: 0, onboardingCorrect: 0, onboardingAnswered: 0, onboardingThreshold: null };
    const decidedInCode = (medianSeconds: number | null) => {
      const expected = { approve: 0, review: 0, pending: 0, unnamed: 1 };
      for (const [finish, regular, stored] of cases) {
        const quality = stored ? { judgments: stored.judgments, decisive: stored.decisive ?? null, medianSeconds: stored.median_seconds, majorityAgreement: stored.majority_agreement, leftRate: stored.left_rate } : undefined;
        const rater = { excluded: 0, status: 'completed', exclusion_reason: null, finish_reason: finish, regular_judgments: regular };
        const decided = decideParticipant({ rater, flags: qualityFlags(quality, medianSeconds, checksPassed), quality: qualityStateOf(rater, regular, quality) }).decision;
        if (decided === 'reject') throw new Error('no case here is rejected');
        expected[decided] += 1;
      }
      return expected;
    };
    // The batch's median time decides "too fast" beside the 5 s floor: one median under 15 s, one over 27 s, none.
    for (const medianSeconds of [12, 30, null]) {
      expect(countQualityDecisions(t.db, batchId, null, partsId, medianSeconds), `median ${medianSeconds}`).toEqual(decidedInCode(medianSeconds));
    }
    expect(decidedInCode(30).review).toBe(decidedInCode(12).review + 1);
    expect(decidedInCode(null).pending).toBe(1);
  });
});
