import type { Command } from 'commander';
import { listDialogueCalls } from '../generation/call.queries.js';
import { getDialogue } from '../generation/dialogue.queries.js';
import { parseJsonColumn } from '../db/json-column.js';
import { storedChatRequestSchema, storedJsonSchema } from '../generation/run-columns.schema.js';
import { type CliContext, CliError, printJson } from './cli-context.js';
import { readStoredAnswer } from '../generation/stored-answer.js';

function contentOf(response: string | null): string {
  if (response === null) return '(no answer)';
  const { content, raw } = readStoredAnswer(response);
  return content ?? raw ?? response;
}

export function registerCalls(program: Command, ctx: CliContext): void {
  const calls = program.command('calls').description('provenance: every model call and what it saw');

  calls
    .command('show')
    .description('print every call of a dialogue: its full request messages, answer, tokens, latency, status and attempt')
    .argument('<dialogue-id>', 'dialogue id')
    .option('--json', 'print a JSON array of calls')
    .action((idText: string, options: { json?: boolean }) => {
      if (!/^\d+$/.test(idText)) throw new CliError(`dialogue id must be a number, not "${idText}"`);
      const db = ctx.db();
      const dialogue = getDialogue(db, Number(idText));
      if (!dialogue) throw new CliError(`no dialogue ${idText}`);
      const rows = listDialogueCalls(db, dialogue.id);
      if (options.json) {
        return printJson(
          ctx,
          rows.map((c) => ({
            id: c.id,
            dialogue_id: c.dialogue_id,
            turn_idx: c.turn_idx,
            speaker: c.speaker,
            attempt: c.attempt,
            status: c.status,
            http_status: c.http_status,
            error: c.error,
            prompt_tokens: c.prompt_tokens,
            completion_tokens: c.completion_tokens,
            latency_ms: c.latency_ms,
            base_url: c.base_url,
            request_hash: c.request_hash,
            request: parseJsonColumn(storedJsonSchema, c.request, `llm_calls.request of call ${c.id}`),
            response: c.response === null ? null : parseJsonColumn(storedJsonSchema, c.response, `llm_calls.response of call ${c.id}`),
            created_at: c.created_at,
          })),
        );
      }
      ctx.out(`Dialogue ${dialogue.id}: ${dialogue.mode}, ${dialogue.model}, scenario ${dialogue.scenario_id}, sample ${dialogue.sample_index}, ${dialogue.state}; ${rows.length} call(s).`);
      if (rows.length === 0) ctx.out(dialogue.origin === 'generated' ? 'No call has been made yet.' : `No calls: this dialogue is ${dialogue.origin}.`);
      for (const c of rows) {
        const request = parseJsonColumn(storedChatRequestSchema, c.request, `llm_calls.request of call ${c.id}`);
        ctx.out('');
        ctx.out(
          `== call ${c.id}: turn ${c.turn_idx}${c.speaker === null ? '' : `, character ${c.speaker}`}, attempt ${c.attempt}, ${c.status}` +
            `${c.http_status === null ? '' : ` (HTTP ${c.http_status})`}, ${c.latency_ms} ms, ${c.prompt_tokens}+${c.completion_tokens} tokens, ${c.created_at}`,
        );
        ctx.out(`endpoint ${c.base_url ?? '(address not recorded)'}`);
        ctx.out(`model ${request.model}, temperature ${request.temperature}, seed ${request.seed ?? '-'}, response format ${request.response_format.type}`);
        for (const m of request.messages) {
          ctx.out(`--- ${m.role} ---`);
          ctx.out(m.content);
        }
        ctx.out('--- answer ---');
        ctx.out(c.error && c.status !== 'invalid' ? `(error) ${c.error}` : contentOf(c.response));
        if (c.status === 'invalid') ctx.out(`(invalid: ${c.error ?? ''})`);
      }
    });
}
