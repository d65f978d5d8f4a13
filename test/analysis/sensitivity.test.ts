import request from 'supertest';
import { describe, expect, it } from 'vitest';
import type { AnalysisReport } from '../../src/analysis/analysis-report.js';
import { renderAnalysisMarkdown } from '../../src/analysis/report-md.js';
import { signIn, tokenFor } from '../auth/session-helpers.js';
import { makeBatchWithJudgments } from '../helpers/factories.js';
import { buildTestApp } from '../helpers/test-app.js';

const SHARED = 'Both speakers stay polite and the second one reaches an agreement sooner.';

describe('the sensitivity section of a batch analysis (issue 43)', () => {
  it('GET /api/batches/:id/analysis, with two raters giving the same reason, shows each comparison without them, equal to the analysis with them excluded, in JSON, Markdown and the console', async () => {
    const t = buildTestApp();
    // Rater 0 prefers a throughout; raters 1 and 2 mostly b, and give one reason word for word.
    const votes: ('a' | 'b')[][] = Array.from({ length: 8 }, (_, i) => ['a', 'b', i < 6 ? 'b' : 'a']);
    const batch = makeBatchWithJudgments(t.db, { votes });
    t.db.prepare('UPDATE judgments SET reason = ? WHERE rater_id IN (?, ?)').run(SHARED, batch.raterIds[1], batch.raterIds[2]);
    // Everyone took ten minutes a comparison: no one is under the reading floor.
    t.db.prepare('UPDATE judgments SET active_ms = 600000').run();
    const admin = await signIn(t.app, t.db, 'admin');
    const token = tokenFor(t.db, admin.email);
    const analysis = async () => (await request(t.app).get(`/api/batches/${batch.batchId}/analysis?max_age=0`).set('Authorization', `Bearer ${token}`).expect(200)).body as AnalysisReport;

    const full = await analysis();
    const section = full.sensitivity;
    expect(section?.flagged_raters).toHaveLength(2);
    expect(section?.flagged_judgments).toBe(16);
    expect(section?.comparisons[0]).toMatchObject({ n: 24, conclusion: 'no clear winner', conclusion_without: expect.stringContaining('preferred') });
    expect(section?.sentence).toContain('changes the conclusion');

    const markdown = renderAnalysisMarkdown(full);
    expect(markdown).toContain('Sensitivity to flagged raters');
    expect(markdown).toContain(section?.sentence ?? 'missing');
    const page = await admin.agent.get(`/console/batches/${batch.batchId}/analysis`).expect(200);
    expect(page.text).toContain('Sensitivity to flagged raters');

    // The same batch with the two raters excluded by hand: its result is the section's "without" column.
    for (const id of [batch.raterIds[1], batch.raterIds[2]]) {
      await admin.agent.post(`/console/batches/${batch.batchId}/raters/${id}/exclude`).type('form').send({ _csrf: admin.csrf, reason: 'same reason as another rater' }).expect(303);
    }
    const excluded = await analysis();
    const c = excluded.comparisons[0];
    expect(section?.comparisons[0]?.without).toEqual({ n: c?.n, win_rate_a: c?.win_rate_a, ci95: c?.ci95, krippendorff_alpha: c?.agreement.krippendorff_alpha });
    expect(excluded.sensitivity?.flagged_raters).toEqual([]);
  });
});
