import type { Command } from 'commander';
import { recordAudit } from '../audit/audit.queries.js';
import { fullName } from '../generation/build-messages.js';
import { getDialogue, listRunDialogues, listTurns } from '../generation/dialogue.queries.js';
import { importDialogues, readDialogueRecords } from '../generation/import-dialogues.js';
import { renderTurnsForRater } from '../generation/render-turns.js';
import { findRun } from '../generation/run.queries.js';
import { getCast, getCharacter } from '../scenarios/scenario.queries.js';
import { type CliContext, CliError, printJson, printTable } from './cli-context.js';

export function registerDialogues(program: Command, ctx: CliContext): void {
  const dialogues = program.command('dialogues').description('generated, imported and demo dialogues');

  dialogues
    .command('import')
    .description('import dialogues made elsewhere: simarena dialogue JSONL (the export format), Sotopia EpisodeLog JSON (object, list, JSONL) or episodes_to_jsonl records')
    .argument('<file>', 'a .jsonl or .json file')
    .option('--mode <mode>', 'mode of every dialogue without a "mode" field: script, agents, mindreaders, or for conversations of people humans, human_agent, human_script (Sotopia: default read from the tag, e.g. gpt-4_script_v1)')
    .option('--model <name>', 'model of every dialogue without a "model" field (Sotopia: default models[1]; humans and human_script: human)')
    .option('--human-character <n>', 'human_agent: the character the person played, 1 or 2, for records without a "human_character" field')
    .option('--scenario <id>', 'scenario of Sotopia episodes (default: found by the scenario text)')
    .option('--run-name <name>', 'name of the import run (default import-<time>-<file>)')
    .action((file: string, options: ImportOptions) => importAction(ctx, file, options));

  dialogues
    .command('list')
    .description('list the dialogues of a run')
    .requiredOption('--run <run>', 'run id or name')
    .option('--json', 'print a JSON array')
    .action((options: { run: string; json?: boolean }) => listAction(ctx, options));

  dialogues
    .command('show')
    .description('print a dialogue as raters see it (turns in which nobody acts are not shown), or the full record with --json')
    .argument('<dialogue-id>', 'dialogue id')
    .option('--json', 'print the full dialogue record: every column, its meta (rewards, models, tag of imports; cuts, earlier failures) and every turn')
    .action((idText: string, options: { json?: boolean }) => showAction(ctx, idText, options));
}

type ImportOptions = { mode?: string; model?: string; humanCharacter?: string; scenario?: string; runName?: string };

function importAction(ctx: CliContext, file: string, options: ImportOptions): void {
  if (options.humanCharacter !== undefined && options.humanCharacter !== '1' && options.humanCharacter !== '2')
    throw new CliError(`--human-character must be 1 or 2, not "${options.humanCharacter}"`);
  const humanCharacter = options.humanCharacter === undefined ? undefined : (Number(options.humanCharacter) as 1 | 2);
  const db = ctx.db();
  const records = readDialogueRecords(file);
  const result = importDialogues(
    db,
    file,
    records,
    { mode: options.mode, model: options.model, humanCharacter, scenarioId: options.scenario, runName: options.runName, createdBy: 'cli' },
    ctx.now(),
  );
  recordAudit(db, { actor: 'cli', action: 'dialogues.import', targetType: 'run', targetId: result.runId, details: { file, dialogues: result.dialogues } }, ctx.now());
  ctx.out(`Imported ${result.dialogues} dialogue(s) into run ${result.runName} (id ${result.runId}).`);
}

function listAction(ctx: CliContext, options: { run: string; json?: boolean }): void {
  const db = ctx.db();
  const run = findRun(db, options.run);
  if (!run) throw new CliError(`no run "${options.run}": see simarena runs list`);
  // The cast by name: a scenario's samples with different casts otherwise look alike (issue 40).
  const casts = new Map<number, [string, string] | null>();
  const castOf = (castId: number) => {
    if (!casts.has(castId)) {
      const cast = getCast(db, castId);
      const c1 = cast && getCharacter(db, cast.character_1_id);
      const c2 = cast && getCharacter(db, cast.character_2_id);
      casts.set(castId, c1 && c2 ? [fullName(c1), fullName(c2)] : null);
    }
    return casts.get(castId) ?? null;
  };
  const rows = listRunDialogues(db, run.id).map((d) => ({
    id: d.id,
    scenario_id: d.scenario_id,
    cast_id: d.cast_id,
    cast: castOf(d.cast_id),
    sample_index: d.sample_index,
    mode: d.mode,
    model: d.model,
    state: d.state,
    end_reason: d.end_reason,
    failure_reason: d.failure_reason,
    turns: listTurns(db, d.id).length,
  }));
  if (options.json) return printJson(ctx, rows);
  printTable(
    ctx,
    ['ID', 'SCENARIO', 'CAST', 'SAMPLE', 'MODE', 'STATE', 'TURNS', 'END'],
    rows.map((r) => [r.id, r.scenario_id, r.cast ? r.cast.join(' & ') : '', r.sample_index, r.mode, r.state, r.turns, r.end_reason ?? r.failure_reason]),
  );
}

function showAction(ctx: CliContext, idText: string, options: { json?: boolean }): void {
  if (!/^\d+$/.test(idText)) throw new CliError(`dialogue id must be a number, not "${idText}"`);
  const db = ctx.db();
  const d = getDialogue(db, Number(idText));
  if (!d) throw new CliError(`no dialogue ${idText}`);
  const cast = getCast(db, d.cast_id);
  const c1 = cast && getCharacter(db, cast.character_1_id);
  const c2 = cast && getCharacter(db, cast.character_2_id);
  const names: [string, string] = [c1 ? fullName(c1) : 'Character 1', c2 ? fullName(c2) : 'Character 2'];
  const turns = listTurns(db, d.id);
  if (options.json) {
    printJson(ctx, {
      ...d,
      illustrative: d.illustrative === 1,
      cast: cast ? [cast.character_1_id, cast.character_2_id] : null,
      names,
      meta: parseMeta(d.meta),
      turns: turns.map((t) => ({ idx: t.idx, speaker: t.speaker, name: names[t.speaker - 1], action: t.action, text: t.text, call_id: t.call_id })),
    });
    return;
  }
  ctx.out(`Dialogue ${d.id}: ${d.mode}, ${d.model}, scenario ${d.scenario_id}, sample ${d.sample_index}, ${d.state}${d.failure_reason ? ` (${d.failure_reason})` : ''}`);
  for (const t of renderTurnsForRater(turns, names)) ctx.out(`${t.name}: ${t.display}`);
}

function parseMeta(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}
