import type { Command } from 'commander';
import { type CliContext, printJson, printTable } from './cli-context.js';
import { CliError } from './cli-context.js';
import { installImport } from '../scenarios/install-import.js';
import { readJsonFile } from '../scenarios/load-library.js';
import { CATEGORIES, type Category } from '../scenarios/scenario.schema.js';
import { findCharacterByAlias, listScenarios } from '../scenarios/scenario.queries.js';
import { importProfiles } from '../scenarios/sotopia-import.js';
import { recordAudit } from '../audit/audit.queries.js';

export function registerScenarios(program: Command, ctx: CliContext): void {
  const scenarios = program.command('scenarios').description('the scenario library');

  scenarios
    .command('list')
    .description('list scenarios with their category, relationship and number of casts')
    .option('--json', 'print a JSON array')
    .action((options: { json?: boolean }) => {
      const rows = listScenarios(ctx.db());
      if (options.json) {
        printJson(
          ctx,
          rows.map((s) => ({
            id: s.id,
            title: s.title,
            category: s.category,
            relationship: s.relationship,
            source: s.source,
            casts: s.casts,
          })),
        );
        return;
      }
      printTable(
        ctx,
        ['ID', 'CATEGORY', 'RELATIONSHIP', 'CASTS', 'TITLE'],
        rows.map((s) => [s.id, s.category, s.relationship, s.casts, s.title]),
      );
    });

  scenarios
    .command('import')
    .description(
      'import scenarios: Sotopia EnvironmentProfile/AgentProfile JSON (list files, one profile per <pk>.json file, Redis dumps), or simarena library JSON',
    )
    .argument('<files...>', 'JSON files (environments and agents may be in separate files)')
    .option('--rename', 'a character or scenario whose slug is taken by a different one gets a fresh slug')
    .option(
      '--replace',
      'a character or scenario whose slug is taken by a different one replaces it (for a character, the scenarios affected are named; a scenario with dialogues is never replaced)',
    )
    .option('--pairs-per-scenario <n>', 'character pairs cast per Sotopia environment (the published study used 5)', '1')
    .option('--seed <n>', 'seed for pairing characters when agents carry no constraint', '0')
    .option('--category <category>', `category for imported scenarios (${CATEGORIES.join(', ')}); default mixed`)
    .action((files: string[], options: { pairsPerScenario: string; seed: string; category?: string; rename?: boolean; replace?: boolean }) => {
      if (options.rename && options.replace) throw new CliError('give --rename or --replace, not both');
      const pairs = Number(options.pairsPerScenario);
      if (!Number.isInteger(pairs) || pairs < 1) throw new CliError('--pairs-per-scenario must be a whole number of at least 1');
      const seed = Number(options.seed);
      if (!Number.isInteger(seed)) throw new CliError('--seed must be a whole number');
      if (options.category && !(CATEGORIES as readonly string[]).includes(options.category))
        throw new CliError(`--category must be one of ${CATEGORIES.join(', ')}`);
      const db = ctx.db();
      const library = importProfiles(
        files.map((path) => ({ path, data: readJsonFile(path) })),
        { pairsPerScenario: pairs, seed, category: options.category as Category | undefined, resolvePk: (pk) => findCharacterByAlias(db, pk) },
      );
      const policy = options.rename ? 'rename' : options.replace ? 'replace' : 'refuse';
      const stored = installImport(db, library, { policy, source: 'import', now: ctx.now().toISOString() });
      recordAudit(db, { actor: 'cli', action: 'scenarios.import', details: { files, ...stored } }, ctx.now());
      ctx.out(`Imported ${stored.scenarios} scenario(s) and ${stored.characters} character(s).`);
      for (const r of stored.renamed) ctx.out(`Character "${r.from}" was taken by a different character: imported as "${r.to}".`);
      for (const r of stored.replaced)
        ctx.out(`Replaced character "${r.id}"; scenarios affected: ${r.scenarios.length > 0 ? r.scenarios.join(', ') : 'none'}.`);
      const scenarioOutcomes = stored.scenarioCollisions;
      for (const r of scenarioOutcomes.renamed) ctx.out(`Scenario "${r.from}" was taken by a different scenario: imported as "${r.to}".`);
      for (const r of scenarioOutcomes.replaced)
        ctx.out(
          `Replaced scenario "${r.id}" (no dialogues used it)${r.factsDropped > 0 ? `; its ${r.factsDropped} marked fact(s) were dropped: the new record carries none` : ''}.`,
        );
      const unchanged = [
        ...(scenarioOutcomes.unchanged.length > 0 ? [`scenario(s) ${listSome(scenarioOutcomes.unchanged.map((u) => u.id))}`] : []),
        ...(stored.unchanged.length > 0 ? [`character(s) ${listSome(stored.unchanged)}`] : []),
      ];
      if (unchanged.length > 0) ctx.out(`Unchanged, already in the library with the same content: ${unchanged.join('; ')}.`);
      for (const u of scenarioOutcomes.unchanged.filter((x) => x.castsAdded > 0))
        ctx.out(`Added ${u.castsAdded} new cast(s) to the unchanged scenario "${u.id}".`);
    });
}

/** Up to ten names, then how many more (a re-imported Sotopia file may hold hundreds). */
function listSome(names: string[]): string {
  return names.length <= 10 ? names.join(', ') : `${names.slice(0, 10).join(', ')} and ${names.length - 10} more`;
}
