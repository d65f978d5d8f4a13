import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { countRunDialogues } from '../generation/dialogue.queries.js';
import { type RunRow, findRun, listRunSummaries, markInterruptedRuns } from '../generation/run.queries.js';
import { type SimulationCard, buildSimulationCard, estimateCost, simulationCardMarkdown, storedSimulationCardSchema } from '../generation/simulation-card.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';
import { parseJsonColumn } from '../db/json-column.js';
import { runModeNamesSchema, storedObjectSchema } from '../generation/run-columns.schema.js';

function requireRun(ctx: CliContext, idOrName: string): RunRow {
  const run = findRun(ctx.db(), idOrName);
  if (!run) throw new CliError(`no run "${idOrName}": see simarena runs list`);
  return run;
}

/** The stored card, or one built now for a run that has not ended (or an import/demo run). */
function cardOf(ctx: CliContext, run: RunRow): SimulationCard {
  return run.simulation_card ? parseJsonColumn(storedSimulationCardSchema, run.simulation_card, `runs.simulation_card of run ${run.id}`) : buildSimulationCard(ctx.db(), run.id);
}

export function registerRuns(program: Command, ctx: CliContext): void {
  const runs = program.command('runs').description('generation runs, imports and the demo seed');

  runs
    .command('list')
    .description('list runs with their state, counts, tokens and estimated cost')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const db = ctx.db();
      // A run left "running" by a process that is gone is shown (and stored) as interrupted.
      markInterruptedRuns(db, ctx.now());
      const rows = listRunSummaries(db).map((r) => ({
        id: r.id,
        name: r.name,
        kind: r.kind,
        state: r.state,
        model: r.model,
        endpoint: r.endpoint_name,
        modes: parseJsonColumn(runModeNamesSchema, r.modes, `runs.modes of run ${r.id}`),
        dialogues: r.dialogues,
        complete: r.complete,
        failed: r.failed,
        calls: r.calls,
        prompt_tokens: r.prompt_tokens,
        completion_tokens: r.completion_tokens,
        estimated_cost: estimateCost(r.prompt_tokens, r.completion_tokens, r.price_prompt_per_mtok, r.price_completion_per_mtok),
        created_at: r.created_at,
        finished_at: r.finished_at,
      }));
      if (options.json) return printJson(ctx, rows);
      printTable(
        ctx,
        ['ID', 'NAME', 'KIND', 'STATE', 'MODEL', 'DIALOGUES', 'FAILED', 'CALLS', 'TOKENS', 'COST'],
        rows.map((r) => [
          r.id,
          r.name,
          r.kind,
          r.state,
          r.model,
          `${r.complete}/${r.dialogues}`,
          r.failed,
          r.calls,
          r.prompt_tokens + r.completion_tokens,
          r.estimated_cost === null ? '' : r.estimated_cost.toFixed(4),
        ]),
      );
    });

  runs
    .command('show')
    .description('show one run: settings, counts, tokens, cost and its simulation card')
    .argument('<run>', 'run id or name')
    .option('--json', 'print JSON (the run and its simulation card)')
    .action((idOrName: string, options: { json?: boolean }) => {
      markInterruptedRuns(ctx.db(), ctx.now());
      const run = requireRun(ctx, idOrName);
      const card = cardOf(ctx, run);
      if (options.json) {
        const { simulation_card: _card, settings, modes, ...rest } = run;
        return printJson(ctx, { ...rest, modes: parseJsonColumn(runModeNamesSchema, modes, `runs.modes of run ${run.id}`), settings: parseJsonColumn(storedObjectSchema, settings, `runs.settings of run ${run.id}`), counts: countRunDialogues(ctx.db(), run.id), simulation_card: card });
      }
      ctx.out(`Run ${run.name} (id ${run.id}), ${run.kind}, ${run.state}${run.error ? `: ${run.error}` : ''}`);
      ctx.out('');
      ctx.out(simulationCardMarkdown(card));
    });

  runs
    .command('card')
    .description('write the simulation card of a run as JSON and Markdown')
    .argument('<run>', 'run id or name')
    .option('--out <dir>', 'folder to write <run>.simulation-card.json and .md into (default: print Markdown)')
    .action((idOrName: string, options: { out?: string }) => {
      const run = requireRun(ctx, idOrName);
      const card = cardOf(ctx, run);
      if (!options.out) return ctx.out(simulationCardMarkdown(card));
      mkdirSync(options.out, { recursive: true });
      const base = join(options.out, `${run.name}.simulation-card`);
      writeFileSync(`${base}.json`, `${JSON.stringify(card, null, 2)}\n`);
      writeFileSync(`${base}.md`, simulationCardMarkdown(card));
      ctx.out(`Wrote ${base}.json and ${base}.md`);
    });
}
