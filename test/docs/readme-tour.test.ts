// Issue 49 items 1 and 6: the README's tour, steps 2 and 3, as written: its generate commands against the suite's
// OpenAI-compatible server, its study.json, and `batches open`, whose launch checklist must pass honestly (no
// warning), with the least time and the per-address limit said.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeLlm, type Responder, callKind, promptOf, startFakeLlm } from '../helpers/fake-llm.js';
import { cli } from '../helpers/run-cli.js';
import { createTestDb, tempDir } from '../helpers/test-db.js';

const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** The README's `npx simarena generate ...` lines, as arguments (comments dropped). */
function generateCommands(): string[][] {
  return [...readme.matchAll(/^npx simarena (generate [^#\n]*)/gm)].map((m) => (m[1] as string).trim().split(/\s+/));
}

/** The README's study.json: the JSON block after "Write `study.json`". */
function studyJson(): Record<string, unknown> {
  const after = readme.slice(readme.indexOf('Write `study.json`'));
  const block = /```json\n([\s\S]*?)```/.exec(after)?.[1];
  if (!block) throw new Error('no study.json in the README');
  return JSON.parse(block) as Record<string, unknown>;
}

// Dialogues about as long as those of the tour with a real model, where raters skimming at 500 words a
// minute took 8.5-9.5 minutes for ten comparisons (about 450 words each, with the scenario's context and goals): a
// SCRIPT of 14 turns of 10 words and AGENTS turns (20 of them, the default maxTurns) of 8 words.
const words = (n: number) => Array.from({ length: n }, (_, i) => ['well', 'I', 'think', 'we', 'could', 'meet', 'near', 'the', 'station', 'instead'][i % 10]).join(' ');
const responder: Responder = (req) => {
  if (callKind(req) === 'script') {
    const names = /Participants: (.+) and (.+)/.exec(promptOf(req));
    const speakers = [names?.[1]?.trim() ?? 'A', names?.[2]?.trim() ?? 'B'];
    return { content: JSON.stringify({ turns: Array.from({ length: 14 }, (_, i) => ({ speaker: speakers[i % 2], action: 'speak', text: words(10) })) }) };
  }
  return { content: JSON.stringify({ action: 'speak', text: words(8) }) };
};

let fake: FakeLlm | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe("the README's tour", () => {
  it('generate, batches create --from study.json and batches open, as the README writes them, open the batch with no warning and say the least time and the per-address limit', async () => {
    const { path } = createTestDb();
    fake = await startFakeLlm({ respond: responder });
    const env = { DATABASE_PATH: path, OPENAI_BASE_URL: fake.baseUrl, OPENAI_API_KEY: 'unused', ENDPOINTS_FILE: join(tempDir(), 'none.json'), PUBLIC_URL: 'https://rate.example.org' };
    const commands = generateCommands();
    expect(commands.map((c) => c.includes('--dry-run'))).toEqual([true, false]);
    for (const args of commands) expect((await cli(args, env)).code).toBe(0);

    const study = studyJson();
    const file = join(tempDir(), 'study.json');
    writeFileSync(file, JSON.stringify(study));
    expect((await cli(['batches', 'create', '--from', file], env)).code).toBe(0);
    const opened = await cli(['batches', 'open', 'tour'], env);
    expect(opened.stderr, opened.stderr).not.toMatch(/warning:|blocking:/);
    expect(opened).toMatchObject({ code: 0, stdout: 'Batch 1 is open.' });
    // The per-address limit of a plain link, with the README's pilot setting.
    expect(opened.stderr).toContain('note: One internet address may have 10 raters working at once and start 20 in 60 minutes');

    const shown = JSON.parse((await cli(['batches', 'show', 'tour', '--json'], env)).stdout) as { time: { promisedMinutes: number; source: string; minimum: { minutes: number; comparisons: number } } };
    // The promise is the README's estimate, honestly at least the least time ten comparisons take.
    expect(shown.time).toMatchObject({ promisedMinutes: study.estimatedMinutes, source: 'estimate', minimum: { comparisons: 10 } });
    expect(shown.time.minimum.minutes).toBeLessThanOrEqual(study.estimatedMinutes as number);
    expect(shown.time.minimum.minutes).toBeGreaterThanOrEqual(9);
  });
});
