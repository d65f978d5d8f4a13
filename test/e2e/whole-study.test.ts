// A researcher's whole study through the real product: scenarios imported and dialogues generated with the CLI against
// the suite's own OpenAI-compatible server, a batch made, opened and linked with the CLI, three raters walking the
// printed link over real HTTP, then `analyze` and `export` checked against what the raters actually submitted.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import pino from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type FakeLlm, type Responder, callKind, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { TEST_SECRET } from '../helpers/test-app.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const MODEL = 'e2e-blindcheck-model-4q';
const RUN = 'e2e-study-run-7k';
const BATCH_NAME = 'E2E round one, natural or not';
const PUBLIC_URL = 'https://rate.example.org';
// Two built-in scenarios with two casts each: 2 scenarios x 2 casts x 2 samples = 8 scenario samples, 8 pairs.
const SCENARIOS = ['mutual-friend-book-swap', 'craigslist-concert-tickets'];
const K = 3;
// Words that tell the two modes' texts apart on a rater's page without naming a mode.
const SCRIPT_WORD = 'marmalade';
const AGENTS_WORD = 'lighthouse';

const libraryDir = new URL('../../data/scenarios/', import.meta.url).pathname;

/** SCRIPT calls get a four-turn script whose every spoken line says SCRIPT_WORD; agent turns say AGENTS_WORD. */
const responder: Responder = (req) => {
  const prompt = promptOf(req);
  if (callKind(req) === 'script') {
    const names = /Participants: (.+) and (.+)/.exec(prompt);
    const [a, b] = [names?.[1]?.trim() ?? 'A', names?.[2]?.trim() ?? 'B'];
    return {
      content: JSON.stringify({
        turns: [
          { speaker: a, action: 'speak', text: `Good morning, the ${SCRIPT_WORD} stall is busy today.` },
          { speaker: b, action: 'speak', text: `It is. I came for the ${SCRIPT_WORD} too.` },
          { speaker: a, action: 'non-verbal', text: 'laughs' },
          { speaker: b, action: 'speak', text: `Then we share the last jar of ${SCRIPT_WORD}.` },
        ],
      }),
    };
  }
  const turn = /You are at Turn #(\d+)/.exec(prompt)?.[1] ?? '?';
  return { content: JSON.stringify({ action: 'speak', text: `From the ${AGENTS_WORD} I can see the bay, turn ${turn}.` }) };
};

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

type Exchange = { method: string; url: string; status: number; location: string; headers: string; body: string };
type Posted = { rater: number; assignment: string; choice: 'left' | 'right' | 'tie'; scriptSide: 'left' | 'right' };

function decodeEntities(text: string): string {
  return text.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The one POST form of a page: its action and hidden fields, as a browser would send them. */
function postForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form?.[1] || form[2] === undefined) throw new Error(`no post form in page:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1];
    if (name !== undefined) fields[name] = decodeEntities(value ?? '');
  }
  return { action: decodeEntities(form[1]), fields };
}

/** The text of one conversation section ("conversation-1" is shown left, "conversation-2" right). */
function conversationText(html: string, id: 'conversation-1' | 'conversation-2'): string {
  const section = new RegExp(`<section class="conversation" aria-labelledby="${id}-heading">([\\s\\S]*?)</section>`).exec(html);
  if (!section?.[1]) throw new Error(`no ${id} in page`);
  return section[1];
}

/** Markup and header words that contain a mode name but say nothing about any dialogue. */
function withoutBenignMarkup(text: string): string {
  return text
    .replace(/<\/?script\b/gi, '<tag')
    .replace(/script-src(-attr|-elem)?/gi, 'x-src')
    .replace(/(text|application)\/javascript/gi, 'mime/js');
}

describe('the whole study, end to end', () => {
  it("a researcher's study, from generation to export, when three raters judge every pair through the printed link, stores K side-balanced judgments a pair, and analyze and export report exactly what the raters chose", async () => {
    // (1) The suite's OpenAI-compatible server and a real SQLite file.
    const { db, path } = createTestDb();
    fake = await startFakeLlm({ respond: responder });
    const env = {
      DATABASE_PATH: path,
      OPENAI_BASE_URL: fake.baseUrl,
      OPENAI_API_KEY: 'sk-e2e',
      ENDPOINTS_FILE: join(tempDir(), 'none.json'),
      PUBLIC_URL,
    };

    // (2) The built-in library, imported as a researcher with only the CLI would; then generation.
    const files = ['characters', 'cooperative', 'competitive', 'mixed'].map((f) => join(libraryDir, `${f}.json`));
    const imported = await cli(['scenarios', 'import', ...files], env);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    const generated = await cli(
      ['generate', '--scenarios', SCENARIOS.join(','), '--modes', 'script,agents', '--model', MODEL, '--samples', '2', '--max-turns', '4', '--run-name', RUN],
      env,
    );
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);
    expect(generated.stdout).toContain(`Run ${RUN} (id 1): complete. 16/16 dialogues complete, 0 failed`);
    expect(db.prepare('SELECT mode, state, count(*) AS n FROM dialogues GROUP BY mode, state ORDER BY mode').all()).toEqual([
      { mode: 'AGENTS', state: 'complete', n: 8 },
      { mode: 'SCRIPT', state: 'complete', n: 8 },
    ]);
    // The two modes' texts really are told apart by their words (what the raters below rely on).
    const wordsByMode = db
      .prepare(
        `SELECT d.mode, sum(t.text LIKE '%${SCRIPT_WORD}%') AS script_words, sum(t.text LIKE '%${AGENTS_WORD}%') AS agents_words
         FROM turns t JOIN dialogues d ON d.id = t.dialogue_id GROUP BY d.mode ORDER BY d.mode`,
      )
      .all() as { mode: string; script_words: number; agents_words: number }[];
    expect(wordsByMode).toEqual([
      { mode: 'AGENTS', script_words: 0, agents_words: expect.any(Number) as number },
      { mode: 'SCRIPT', script_words: 24, agents_words: 0 },
    ]);
    expect(wordsByMode[0]?.agents_words).toBeGreaterThan(0);

    // (3) A batch file, then create, open and link with the CLI.
    const batchFile = join(tempDir(), 'batch.json');
    writeFileSync(
      batchFile,
      JSON.stringify({
        name: BATCH_NAME,
        runs: [RUN],
        comparisons: [[`SCRIPT:${MODEL}`, `AGENTS:${MODEL}`]],
        judgmentsPerPair: K,
        allowTie: true,
        provider: { kind: 'prolific', completionCodes: { completed: 'C0E2E0K1', screenedOut: 'S0E2E0K1', noConsent: 'N0E2E0K1' } },
        consent: 'You agree to take part.',
        instructions: 'Choose the more natural conversation.',
        pay: '£2.00',
      }),
    );
    const created = await cli(['batches', 'create', '--from', batchFile], env);
    expect(created.stderr).toBe('');
    expect(created.stdout).toMatch(/^Created batch 1 \(draft\) with 8 pair\(s\)\./);
    expect(await cli(['batches', 'open', '1'], env)).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
    const linked = await cli(['batches', 'link', '1'], env);
    expect(linked).toMatchObject({ code: 0, stderr: `note: the link uses ${PUBLIC_URL}, from PUBLIC_URL in this environment.` });
    const link = linked.stdout.trim();
    expect(link.startsWith(`${PUBLIC_URL}/r/`)).toBe(true);
    expect(link).toContain('PROLIFIC_PID={{%PROLIFIC_PID%}}');

    // (4) The real app over the same file; three raters take the printed link as Prolific would fill it in.
    const app = createApp({
      db,
      config: loadConfig({ DATABASE_PATH: path, LOG_LEVEL: 'silent', PUBLIC_URL }),
      logger: pino({ level: 'silent' }),
      sessionSecret: TEST_SECRET,
    });
    const exchanges: Exchange[] = [];
    const record = (method: string, url: string, res: request.Response) => {
      exchanges.push({
        method,
        url,
        status: res.status,
        location: String(res.headers.location ?? ''),
        headers: Object.entries(res.headers as Record<string, unknown>)
          .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
          .join('\n'),
        body: res.text ?? '',
      });
      return res;
    };
    const get = async (url: string) => record('GET', url, await request(app).get(url));
    const post = async (url: string, fields: Record<string, string>) => record('POST', url, await request(app).post(url).type('form').send(fields));
    const locationOf = (res: request.Response) => {
      expect(res.status).toBe(303);
      return String(res.headers.location);
    };

    const posted: Posted[] = [];
    for (const rater of [1, 2, 3]) {
      const pid = `5f0e2e${String(rater).padStart(18, '0')}`;
      const entry = link
        .slice(PUBLIC_URL.length)
        .replace('{{%PROLIFIC_PID%}}', pid)
        .replace('{{%STUDY_ID%}}', 'e2estudy0001')
        .replace('{{%SESSION_ID%}}', `e2esession${rater}`);
      // Consent is shown at the entry link; the rater is created when they agree.
      const consent = await get(entry);
      expect(consent.status).toBe(200);
      const consentForm = postForm(consent.text);
      const instructionsUrl = locationOf(await post(consentForm.action, { ...consentForm.fields, decision: 'agree' }));
      expect(instructionsUrl).toMatch(/\/instructions\?rt=/);
      const instructions = await get(instructionsUrl);
      expect(instructions.status).toBe(200);
      const instructionsForm = postForm(instructions.text);
      let next = locationOf(await post(instructionsForm.action, instructionsForm.fields));
      let served = 0;
      for (;;) {
        // The instructions lead to /next; an answer leads straight to the next comparison, or to the end.
        if (served === 0) expect(next).toMatch(/\/next\?rt=/);
        const place = /\/next\?rt=/.test(next) ? locationOf(await get(next)) : next;
        if (/\/done\?rt=/.test(place)) {
          const done = await get(place);
          expect(done.status).toBe(200);
          expect(done.text).toContain('C0E2E0K1');
          break;
        }
        expect(place).toMatch(/\/c\/[^/?]+\?rt=/);
        served += 1;
        expect(served).toBeLessThanOrEqual(8);
        const page = await get(place);
        expect(page.status).toBe(200);
        const [left, right] = [conversationText(page.text, 'conversation-1'), conversationText(page.text, 'conversation-2')];
        const leftIsScript = left.includes(SCRIPT_WORD) && !left.includes(AGENTS_WORD);
        const rightIsScript = right.includes(SCRIPT_WORD) && !right.includes(AGENTS_WORD);
        // Exactly one side holds the SCRIPT text, the other the AGENTS text.
        expect(leftIsScript !== rightIsScript).toBe(true);
        expect(leftIsScript ? right : left).toContain(AGENTS_WORD);
        const scriptSide = leftIsScript ? 'left' : 'right';
        const agentsSide = leftIsScript ? 'right' : 'left';
        // Rater 1 always picks the SCRIPT text; rater 2 mostly the AGENTS text; rater 3 goes left, right, tie in turn.
        const choice = rater === 1 ? scriptSide : rater === 2 ? (served % 3 === 0 ? scriptSide : agentsSide) : (['left', 'right', 'tie'] as const)[served % 3] ?? 'tie';
        const form = postForm(page.text);
        expect(form.fields._csrf).toBeTruthy();
        expect(form.fields.rt).toBeTruthy();
        const assignment = decodeURIComponent(/\/c\/([^/?]+)/.exec(form.action)?.[1] ?? '');
        next = locationOf(await post(form.action, { ...form.fields, choice, active_ms: '12000' }));
        posted.push({ rater, assignment, choice, scriptSide });
      }
      // Every rater can judge every pair once (8 pairs, cap 10, K = 3 with three raters).
      expect(served).toBe(8);
    }
    expect(posted).toHaveLength(24);
    expect(new Set(posted.map((p) => p.assignment)).size).toBe(24);

    // Blinding: no URL, header or body a rater's browser received names a mode, the model, the run or the batch.
    const forbidden = [MODEL, RUN, BATCH_NAME];
    for (const ex of exchanges) {
      for (const [where, raw] of Object.entries({ url: ex.url, location: ex.location, headers: ex.headers, body: ex.body })) {
        const text = withoutBenignMarkup(raw);
        expect(/script|agents|mindreaders/i.exec(text)?.[0], `${ex.method} ${ex.url} ${where}`).toBeUndefined();
        for (const word of forbidden) expect(text.toLowerCase().includes(word.toLowerCase()), `${ex.method} ${ex.url} ${where}: ${word}`).toBe(false);
      }
    }

    // (5) The database: K judgments a pair, each pair's sides balanced within one, each stored as it was posted.
    const perPair = db
      .prepare(
        `SELECT p.id, count(j.id) AS n, coalesce(sum(j.left_side = 'a'), 0) AS left_a FROM pairs p
         LEFT JOIN judgments j ON j.pair_id = p.id WHERE p.batch_id = 1 AND p.kind = 'regular' GROUP BY p.id ORDER BY p.id`,
      )
      .all() as { id: number; n: number; left_a: number }[];
    expect(perPair).toHaveLength(8);
    for (const pair of perPair) {
      expect(pair.n).toBe(K);
      expect(Math.abs(pair.left_a - (pair.n - pair.left_a))).toBeLessThanOrEqual(1);
    }
    const storedOf = db.prepare(
      `SELECT j.id, j.choice, j.left_side, j.winner, j.label, da.mode AS mode_a, db.mode AS mode_b
       FROM judgments j JOIN assignments a ON a.id = j.assignment_id JOIN pairs p ON p.id = j.pair_id
       JOIN dialogues da ON da.id = p.dialogue_a_id JOIN dialogues db ON db.id = p.dialogue_b_id WHERE a.public_id = :publicId`,
    );
    // The expected winner, unblinded from what the rater saw: a is the SCRIPT condition (the comparison's first).
    const winnerOf = (p: Posted) => (p.choice === 'tie' ? 'tie' : p.choice === p.scriptSide ? 'a' : 'b');
    const judgmentIdOf = new Map<number, Posted>();
    for (const p of posted) {
      const stored = storedOf.get({ publicId: p.assignment }) as
        | { id: number; choice: string; left_side: string; winner: string; label: string; mode_a: string; mode_b: string }
        | undefined;
      expect(stored).toMatchObject({
        choice: p.choice,
        left_side: p.scriptSide === 'left' ? 'a' : 'b',
        winner: winnerOf(p),
        mode_a: 'SCRIPT',
        mode_b: 'AGENTS',
      });
      if (stored) judgmentIdOf.set(stored.id, p);
    }
    expect(judgmentIdOf.size).toBe(24);

    // (6) analyze: n, wins and ties are what the raters submitted, counted here from the posts.
    const analyzed = await cli(['analyze', '--batch', '1', '--format', 'json'], env);
    expect(analyzed.stderr).toBe('');
    expect(analyzed.code).toBe(0);
    const report = JSON.parse(analyzed.stdout) as { comparisons: { a: string; b: string; n: number; wins_a: number; wins_b: number; ties: number }[] };
    const count = (w: 'a' | 'b' | 'tie') => posted.filter((p) => winnerOf(p) === w).length;
    expect(count('a')).toBeGreaterThan(0);
    expect(count('b')).toBeGreaterThan(0);
    expect(count('tie')).toBeGreaterThan(0);
    expect(report.comparisons).toHaveLength(1);
    expect(report.comparisons[0]).toMatchObject({ a: `SCRIPT:${MODEL}`, b: `AGENTS:${MODEL}`, n: 24, wins_a: count('a'), wins_b: count('b'), ties: count('tie') });

    // (7) export judgments-csv: one row per judgment, winner unblinded, `left` the side shown.
    const out = join(tempDir(), 'judgments.csv');
    const exported = await cli(['export', '--batch', '1', '--format', 'judgments-csv', '--out', out], env);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const rows = parse(readFileSync(out, 'utf8'), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
    expect(rows).toHaveLength(24);
    expect(new Set(rows.map((r) => r.judgment_id)).size).toBe(24);
    for (const row of rows) {
      const p = judgmentIdOf.get(Number(row.judgment_id));
      expect(p, `judgment ${row.judgment_id} was posted by a rater`).toBeDefined();
      if (!p) continue;
      expect(row).toMatchObject({
        model_a: `SCRIPT:${MODEL}`,
        model_b: `AGENTS:${MODEL}`,
        left: p.scriptSide === 'left' ? 'a' : 'b',
        winner: { a: 'model_a', b: 'model_b', tie: 'tie' }[winnerOf(p)],
        provider: 'prolific',
      });
    }
    // One judge pseudonym per rater, and each rater's rows are the ones that rater posted.
    const judges = new Map<string, Set<number>>();
    for (const row of rows) {
      const rater = judgmentIdOf.get(Number(row.judgment_id))?.rater ?? 0;
      judges.set(row.judge ?? '', (judges.get(row.judge ?? '') ?? new Set()).add(rater));
    }
    expect([...judges.values()].map((s) => [...s])).toEqual(expect.arrayContaining([[1], [2], [3]]));
    expect(judges.size).toBe(3);
  });
});
