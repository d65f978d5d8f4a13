import { convMetadata, estimateTokens } from './arena-style.js';
import { createDialogueLoader, promptText } from './dialogue-loader.js';
import type { ExportContext } from './export-context.js';
import { iterateJudgments } from './export.queries.js';
import { judgePseudonym } from '../rating/judge-pseudonym.js';
import { jsonArrayWriter } from './stream-write.js';

// Chatbot Arena battles, shaped like its public releases (clean_battle JSON): a plain JSON list so the Elo and
// Bradley-Terry notebooks written for those files run unchanged. Each conversation is the shared scenario prompt as
// the user turn and the whole dialogue as the assistant turn, so conversation_a[0] equals conversation_b[0] as in
// the Arena. The Arena's `anony` is true: raters never saw which condition was which. Each message carries
// `num_tokens` and each battle `conv_metadata` (src/export/arena-style.ts), so elo_analysis.py's style control and
// its "long" category run unchanged; `dedup_tag` is set as in the public releases, whose notebooks keep `sampled`.

const WINNER = { a: 'model_a', b: 'model_b', tie: 'tie' } as const;

export async function writeArena(ctx: ExportContext, out: NodeJS.WritableStream): Promise<number> {
  const load = createDialogueLoader(ctx.db);
  const list = jsonArrayWriter(out);
  await list.open();
  let rows = 0;
  for (const row of iterateJudgments(ctx.db, ctx.scope)) {
    const a = load(row.dialogue_a_id);
    const b = load(row.dialogue_b_id);
    const prompt = promptText(a.prompt);
    const user = { role: 'user', content: prompt, num_tokens: estimateTokens(prompt) };
    await list.item({
      question_id: `${row.batch_id}-${row.judgment_id}`,
      model_a: row.model_a,
      model_b: row.model_b,
      winner: WINNER[row.winner],
      judge: judgePseudonym(ctx.batch.judge_salt, { provider: row.provider, participantId: row.participant_id, raterPublicId: row.rater_public_id }),
      conversation_a: [user, { role: 'assistant', content: a.transcript, num_tokens: estimateTokens(a.transcript) }],
      conversation_b: [user, { role: 'assistant', content: b.transcript, num_tokens: estimateTokens(b.transcript) }],
      turn: 1,
      conv_metadata: convMetadata(prompt, a.transcript, b.transcript),
      dedup_tag: { high_freq: false, sampled: true },
      anony: true,
      // Scenarios carry no language tag; the Arena's notebooks only filter on it when asked to.
      language: 'unknown',
      tstamp: Date.parse(row.submitted_at) / 1000,
      pair_id: row.pair_id,
      scenario_id: row.scenario_id,
      is_gold: row.is_gold === 1,
    });
    rows++;
  }
  await list.close();
  return rows;
}
