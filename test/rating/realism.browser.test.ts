// Issue 53, done means: a realism batch over imported conversations of people (HUMANS, HUMAN_SCRIPT, `dialogues
// import`) and generated ones (SCRIPT and AGENTS from `simarena generate` against the suite's OpenAI-compatible fake),
// made with `batches create --from` and walked by raters in Chromium: the which-is-real question with its confidence
// scale, only the text telling the sides apart (checked over everything the browsers receive), and `simarena analyze`
// giving the realism section over exactly what was stored.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, serve } from '../helpers/browser.js';
import { startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { buildTestApp } from '../helpers/test-app.js';
import { tempDir } from '../helpers/test-db.js';
import { installTestLibrary } from '../generation/generation-fixtures.js';
import { internalIds, leaks, recordExchanges } from './leak-check.js';
import type { Exchange } from './rating-fixtures.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const MODEL = 'realcheck-model-3b';
const RELATIONSHIPS = ['stranger', 'acquaintance', 'friend'] as const;
// What people write and the fake model never does: a rater who reads closely can tell from the text alone.
const PEOPLE_MARK = 'haha';

/** Two people chatting write the mark; one person writing both sides writes tidier text. */
function peopleRecords(mode: 'humans' | 'human_script'): string {
  const mark = mode === 'humans' ? PEOPLE_MARK : 'Well,';
  return RELATIONSHIPS.map((r) =>
    JSON.stringify({
      scenario_id: `loan-${r}`,
      cast: ['ana-silva', 'ben-okoro'],
      mode,
      turns: [
        { speaker: 1, action: 'speak', text: `${mark} ok so... could you lend me 500 till friday?` },
        { speaker: 2, action: 'speak', text: 'friday?? whats going on' },
        { speaker: 1, action: 'speak', text: 'slow month at the bistro tbh' },
        { speaker: 2, action: 'speak', text: `${mark} fine, but friday` },
      ],
    }),
  ).join('\n');
}

async function setUp() {
  const built = buildTestApp();
  installTestLibrary(built.db, [...RELATIONSHIPS]);
  const fake = await startFakeLlm();
  const dir = tempDir();
  const env = { DATABASE_PATH: built.dbPath, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'sk-test', ENDPOINTS_FILE: join(dir, 'none.json'), PUBLIC_URL: 'https://rate.example.org' };
  const run = async (args: string[]) => {
    const result = await cli(args, env);
    if (result.code !== 0) throw new Error(`${args.join(' ')}: ${result.stderr}`);
    return result;
  };
  await run(['generate', '--scenarios', 'all', '--modes', 'script,agents', '--model', MODEL, '--max-turns', '4', '--run-name', 'models-run']);
  for (const mode of ['humans', 'human_script'] as const) {
    writeFileSync(join(dir, `${mode}.jsonl`), peopleRecords(mode));
    await run(['dialogues', 'import', join(dir, `${mode}.jsonl`), '--run-name', `${mode}-run`]);
  }
  writeFileSync(
    join(dir, 'batch.json'),
    JSON.stringify({
      name: 'Which is real, in a browser',
      runs: ['models-run', 'humans-run', 'human_script-run'],
      comparisons: [['HUMANS:human', `SCRIPT:${MODEL}`], [`AGENTS:${MODEL}`, 'HUMANS:human'], ['HUMANS:human', 'HUMAN_SCRIPT:human']],
      judgmentsPerPair: 2,
      perRaterCap: 3,
      questions: [
        { id: 'q-natural-4', text: 'Which conversation sounds more natural?', reason: 'off' },
        { id: 'q-real-8', kind: 'which-is-real', text: 'One of these conversations happened between two real people. Which one?', real: 'HUMANS:human', reason: 'off' },
      ],
      equivalenceMargin: 0.1,
      provider: { kind: 'link', completionCodes: { completed: 'REAL-DONE' } },
      consent: 'You agree to read and compare conversations.',
      instructions: 'Read both conversations, then answer the questions below them.',
      pay: '£2.00',
    }),
  );
  const created = await run(['batches', 'create', '--from', join(dir, 'batch.json')]);
  const batchId = Number(/batch (\d+)/i.exec(created.stdout)?.[1]);
  await run(['batches', 'open', String(batchId)]);
  const publicId = built.db.prepare('SELECT public_id FROM batches WHERE id = :id').pluck().get({ id: batchId }) as string;
  const server = await serve(built.app);
  return { ...built, fake, env, run, batchId, publicId, server, close: async () => (await server.close(), await fake.close()) };
}

/**
 * One rater's session: careful raters choose as real the conversation whose text reads like people's, guessers always
 * Conversation 1; the confidence is given by a click (careful: 4, guessers: 2), except on the guessers' last page.
 */
async function walkRater(page: Page, url: string, careful: boolean): Promise<number> {
  await page.goto(url);
  await page.getByRole('button', { name: 'I agree, continue' }).click();
  await page.waitForURL(/\/instructions\?/);
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForURL(/\/(c\/|done)/);
  let answered = 0;
  while (!page.url().includes('/done')) {
    const realGroup = page.getByRole('group', { name: /Question 2 of 2: One of these conversations happened between two real people/ });
    expect(await realGroup.getByRole('radio').count()).toBe(2);
    if (answered === 0 && careful) {
      // The confidence scale is a labelled group of its own that passes the accessibility checks the page does.
      expect(await page.getByRole('group', { name: 'How sure are you? (question 2, optional)' }).getByRole('radio').count()).toBe(5);
      const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']).analyze();
      expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
    }
    const realIsLeft = (await page.locator('#conversation-1').innerText()).toLowerCase().includes(PEOPLE_MARK);
    await page.locator('label[for="choice-left"]').click();
    await page.locator(!careful || realIsLeft ? 'label[for="choice-2-left"]' : 'label[for="choice-2-right"]').click();
    if (careful || answered < 2) await page.locator(`label[for="confidence-2-${careful ? 4 : 2}"]`).click();
    const before = page.url();
    await Promise.all([page.waitForURL((u) => u.href !== before), page.getByRole('button', { name: 'Submit answers' }).click()]);
    answered++;
  }
  return answered;
}

type Stored = { judge: number; right: number; confidence: number | null; condition: string };

describe('a realism batch in Chromium', () => {
  it('raters walk a batch of imported people\'s conversations against generated ones, answering which is real with a confidence; nothing the browsers receive tells the sides apart but the text, and analyze gives the realism section over what was stored', async () => {
    const t = await setUp();
    const exchanges: Promise<Exchange>[] = [];
    try {
      const pairs = t.db.prepare("SELECT count(*) FROM pairs WHERE batch_id = :b AND kind = 'regular'").pluck().get({ b: t.batchId });
      expect(pairs).toBe(9);
      let answered = 0;
      for (let r = 0; r < 6; r++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const page = await context.newPage();
        exchanges.push(...recordExchanges(page));
        answered += await walkRater(page, `${t.server.url}/r/${t.publicId}`, r % 2 === 0);
        expect(await page.locator('.completion-code strong').textContent()).toBe('REAL-DONE');
        await context.close();
      }
      expect(answered).toBe(18);

      const stored = t.db
        .prepare(
          `SELECT j.rater_id AS judge, (j.label = 'HUMANS:human') AS "right", j.confidence,
                  CASE WHEN c.condition_a = 'HUMANS:human' THEN c.condition_b ELSE c.condition_a END AS condition
           FROM judgments j JOIN pairs p ON p.id = j.pair_id JOIN comparisons c ON c.id = p.comparison_id
           WHERE j.batch_id = :b AND j.question_id = 'q-real-8'`,
        )
        .all({ b: t.batchId }) as Stored[];
      expect(stored).toHaveLength(18);
      // Careful raters (every other one) were always right, from the text alone.
      const careful = new Set(t.db.prepare('SELECT id FROM raters WHERE batch_id = :b ORDER BY id').pluck().all({ b: t.batchId }).filter((_, i) => i % 2 === 0) as number[]);
      expect(stored.filter((s) => careful.has(s.judge)).every((s) => s.right === 1)).toBe(true);
      expect(stored.filter((s) => careful.has(s.judge)).map((s) => s.confidence)).toEqual(Array(9).fill(4));
      expect(stored.filter((s) => !careful.has(s.judge)).map((s) => s.confidence).sort()).toEqual([2, 2, 2, 2, 2, 2, null, null, null]);

      const all = await Promise.all(exchanges);
      const runNames = ['models-run', 'humans-run', 'human_script-run'];
      expect(leaks(all, [MODEL, 'human', ...runNames, 'q-natural-4', 'q-real-8'], internalIds(t.db))).toEqual([]);

      const analysed = await t.run(['analyze', '--batch', String(t.batchId), '--format', 'json', '--bootstrap', '100']);
      const report = JSON.parse(analysed.stdout) as { questions: { id: string; realism?: { conditions: { condition: string; n: number; correct: number }[]; calibration: { n: number } | null; two_by_two: { model: string }[] } }[] };
      const realism = report.questions.find((q) => q.id === 'q-real-8')?.realism;
      expect(realism?.conditions.map((c) => [c.condition, c.n, c.correct])).toEqual(
        [`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`, 'HUMAN_SCRIPT:human'].map((c) => {
          const of = stored.filter((s) => s.condition === c);
          return [c, of.length, of.filter((s) => s.right === 1).length];
        }),
      );
      expect(realism?.calibration?.n).toBe(15);
      expect(realism?.two_by_two.map((x) => x.model)).toEqual([MODEL]);
      const md = await t.run(['analyze', '--batch', String(t.batchId), '--format', 'md', '--bootstrap', '100']);
      expect(md.stdout).toContain('Which is real: detection per condition');
      expect(md.stdout).toContain(`2×2 of writer and knowledge (${MODEL}): effects`);
    } finally {
      await t.close();
    }
  }, 180_000);
});
