import type { Db } from '../db/connection.js';
import { ScenarioFileError } from './library-error.js';
import {
  type CharacterRow,
  type ScenarioRow,
  addCasts,
  characterExists,
  countDialoguesOfScenario,
  findCharacterByAlias,
  findScenarioByAlias,
  getCharacter,
  getScenario,
  listScenarioFacts,
  listScenariosCasting,
  upsertCharacter,
  upsertCharacterAlias,
  upsertScenario,
  upsertScenarioAlias,
} from './scenario.queries.js';
import type { Character, Fact, Scenario } from './scenario.schema.js';
import type { ImportedLibrary } from './sotopia-import.js';

/** What to do with an imported character or scenario whose slug is taken by a different one. */
export type CollisionPolicy = 'refuse' | 'rename' | 'replace';

export type ImportReport = {
  characters: number;
  scenarios: number;
  /** Imported characters given a fresh slug (--rename). */
  renamed: { from: string; to: string }[];
  /** Existing characters replaced (--replace), with the scenarios whose casts now play the new content. */
  replaced: { id: string; scenarios: string[] }[];
  /** Imported characters identical to one already in the library (nothing written). */
  unchanged: string[];
  /** The same outcomes for scenarios. */
  scenarioCollisions: {
    renamed: { from: string; to: string }[];
    /** Replaced scenarios (never one with dialogues), with the marked facts dropped because the newcomer carries none. */
    replaced: { id: string; factsDropped: number }[];
    /** Scenarios equal to one already in the library: only the casts it did not have yet are added. */
    unchanged: { id: string; castsAdded: number }[];
  };
};

function displayName(c: { first_name: string; last_name: string } | { firstName: string; lastName: string }): string {
  return 'first_name' in c ? `${c.first_name} ${c.last_name}`.trim() : `${c.firstName} ${c.lastName}`.trim();
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function sameCharacter(row: CharacterRow, c: Character): boolean {
  return (
    row.first_name === c.firstName &&
    row.last_name === c.lastName &&
    row.age === c.age &&
    row.gender === c.gender &&
    row.pronouns === c.pronouns &&
    row.occupation === c.occupation &&
    row.public_info === c.publicInfo &&
    row.personality_and_values === c.personalityAndValues &&
    row.decision_making_style === c.decisionMakingStyle &&
    row.secret === c.secret &&
    row.big_five === c.bigFive &&
    row.moral_values === JSON.stringify(c.moralValues) &&
    row.schwartz_values === JSON.stringify(c.schwartzValues)
  );
}

/**
 * Equal content: what a dialogue's prompts and its raters read. Casts are left out (an import may add casts), and
 * marked facts are compared only when the record carries them (Sotopia's format has none).
 */
function sameScenario(db: Db, row: ScenarioRow, s: Scenario): boolean {
  const sameText =
    row.title === s.title &&
    row.category === s.category &&
    row.context === s.context &&
    row.relationship === s.relationship &&
    row.goal_1 === s.goals[0] &&
    row.goal_2 === s.goals[1];
  if (!sameText || s.facts === undefined) return sameText;
  const key = (facts: Fact[]) => JSON.stringify(facts.map((f) => [f.owner, f.kind, f.value, f.aliases]));
  return key(listScenarioFacts(db, row.id)) === key(s.facts);
}

/**
 * The scenario with the same content stored under the record's own slug or by an earlier `--rename` (`slug-2`,
 * `slug-3`, …): re-importing a file must find it rather than make another copy. With a Sotopia pk its alias
 * usually points there already; without one (simarena files, environments without pk) only the slugs can tell;
 * and after a file with a changed text was renamed, the earlier file's pk now points to the copy, while its
 * own text is still under its own slug.
 */
function findEqualScenario(db: Db, bases: string[], scenario: Scenario): string | undefined {
  for (const base of bases) {
    for (let n = 1; ; n++) {
      const row = getScenario(db, n === 1 ? base : `${base}-${n}`);
      if (!row) {
        if (n === 1) continue;
        break;
      }
      if (sameScenario(db, row, scenario)) return row.id;
    }
  }
  return undefined;
}

type ScenarioContext = { imported: ImportedLibrary; policy: CollisionPolicy; source: string; now: string; report: ImportReport; importedIds: Set<string> };

/**
 * Stores one imported scenario (casts already mapped to the slugs its characters were stored under); returns the
 * slug it is stored under. The rules are the characters' ones, plus one: a scenario with dialogues is never
 * replaced, since its dialogues' raters would then read a context and goals the model never saw.
 */
function installScenario(db: Db, scenario: Scenario, ctx: ScenarioContext): string {
  const { report } = ctx;
  const pk = ctx.imported.pks.scenarios.get(scenario.id);
  const origin = ctx.imported.origins.scenarios.get(scenario.id) ?? ctx.source;
  // A scenario imported before with the same Sotopia pk is the same scenario, whatever slug it was given.
  const target = (pk && findScenarioByAlias(db, pk)) || scenario.id;
  const existing = getScenario(db, target);
  if (!existing) {
    upsertScenario(db, { ...scenario, id: target }, ctx.source, ctx.now);
    return target;
  }
  const unchanged = (id: string): string => {
    report.scenarioCollisions.unchanged.push({ id, castsAdded: addCasts(db, id, scenario.casts) });
    return id;
  };
  if (sameScenario(db, existing, scenario)) return unchanged(target);
  if (ctx.policy !== 'replace') {
    const copy = findEqualScenario(db, [...new Set([target, scenario.id])], scenario);
    if (copy) return unchanged(copy);
  }
  if (ctx.policy === 'rename') {
    let n = 2;
    while (getScenario(db, `${target}-${n}`) || ctx.importedIds.has(`${target}-${n}`)) n++;
    const id = `${target}-${n}`;
    upsertScenario(db, { ...scenario, id }, ctx.source, ctx.now);
    report.scenarioCollisions.renamed.push({ from: target, to: id });
    return id;
  }
  const dialogues = countDialoguesOfScenario(db, target);
  const newcomer = `scenario "${scenario.id}" (${scenario.title}${pk ? `, Sotopia pk ${pk}` : ''})`;
  if (ctx.policy === 'replace') {
    if (dialogues > 0)
      throw new ScenarioFileError(
        `${origin}: ${newcomer} would replace the scenario "${target}" (${existing.title}), but ${plural(dialogues, 'dialogue')} ` +
          `${dialogues === 1 ? 'uses' : 'use'} it, and ${dialogues === 1 ? 'its raters' : 'their raters'} would read a text the model never saw: ` +
          'import it under a fresh slug with --rename instead; nothing was imported',
      );
    const factsDropped = scenario.facts === undefined ? listScenarioFacts(db, target).length : 0;
    // The marked facts belong to the text they mark: a newcomer that carries none leaves none.
    upsertScenario(db, { ...scenario, id: target, facts: scenario.facts ?? [] }, ctx.source, ctx.now);
    report.scenarioCollisions.replaced.push({ id: target, factsDropped });
    return target;
  }
  throw new ScenarioFileError(
    `${origin}: ${newcomer} differs from the scenario "${target}" already in the library ` +
      `(${existing.title}, source ${existing.source}${dialogues > 0 ? `, ${plural(dialogues, 'dialogue')}` : ''}): ` +
      (dialogues > 0
        ? `import it under a fresh slug with --rename (it cannot be replaced: ${plural(dialogues, 'dialogue')} ${dialogues === 1 ? 'was' : 'were'} written for its text)`
        : 'import it under a fresh slug with --rename, or replace the existing one with --replace') +
      '; nothing was imported',
  );
}

/**
 * Stores an imported library in one transaction (a file that fails stores nothing). A character or scenario whose
 * slug (or Sotopia pk) names one already in the library is: the same one when its content is equal (a scenario
 * then only gains the casts it did not have); otherwise refused with both named, unless `policy` says to give it a
 * fresh slug or to replace the existing one (the scenarios a replaced character plays in are returned; a scenario
 * with dialogues is never replaced). A cast of two characters with the same display name is refused: a SCRIPT
 * tells its speakers apart by name.
 */
export function installImport(db: Db, imported: ImportedLibrary, options: { policy: CollisionPolicy; source: string; now: string }): ImportReport {
  const report: ImportReport = {
    characters: imported.characters.length,
    scenarios: imported.scenarios.length,
    renamed: [],
    replaced: [],
    unchanged: [],
    scenarioCollisions: { renamed: [], replaced: [], unchanged: [] },
  };
  return db.transaction(() => {
    const finalId = new Map<string, string>();
    const importedIds = new Set(imported.characters.map((c) => c.id));
    const names = new Map<string, string>();
    for (const character of imported.characters) {
      const pk = imported.pks.characters.get(character.id);
      const origin = imported.origins.characters.get(character.id) ?? options.source;
      // A character imported before with the same Sotopia pk is the same person, whatever slug it was given.
      const target = (pk && findCharacterByAlias(db, pk)) || character.id;
      const existing = getCharacter(db, target);
      let id = target;
      if (!existing) {
        upsertCharacter(db, { ...character, id }, options.source, options.now);
      } else if (sameCharacter(existing, character)) {
        report.unchanged.push(id);
      } else if (options.policy === 'rename') {
        let n = 2;
        while (characterExists(db, `${target}-${n}`) || importedIds.has(`${target}-${n}`)) n++;
        id = `${target}-${n}`;
        upsertCharacter(db, { ...character, id }, options.source, options.now);
        report.renamed.push({ from: target, to: id });
      } else if (options.policy === 'replace') {
        upsertCharacter(db, { ...character, id }, options.source, options.now);
        report.replaced.push({ id, scenarios: listScenariosCasting(db, id) });
      } else {
        const scenarios = listScenariosCasting(db, target);
        throw new ScenarioFileError(
          `${origin}: character "${target}" (${displayName(character)}) differs from the character "${target}" already in the library ` +
            `(${displayName(existing)}, source ${existing.source}${scenarios.length > 0 ? `, cast in ${scenarios.join(', ')}` : ''}): ` +
            'import it under a fresh slug with --rename, or replace the existing one with --replace; nothing was imported',
        );
      }
      finalId.set(character.id, id);
      names.set(id, displayName(character));
      if (pk) upsertCharacterAlias(db, pk, id);
    }
    const nameOf = (id: string): string => {
      const known = names.get(id);
      if (known !== undefined) return known;
      const row = getCharacter(db, id);
      if (!row) throw new ScenarioFileError(`${options.source}: a cast names unknown character "${id}"; import its file too`);
      return displayName(row);
    };
    const scenarioContext: ScenarioContext = { imported, ...options, report, importedIds: new Set(imported.scenarios.map((s) => s.id)) };
    for (const scenario of imported.scenarios) {
      const casts = scenario.casts.map(([a, b]): [string, string] => [finalId.get(a) ?? a, finalId.get(b) ?? b]);
      for (const [a, b] of casts) {
        if (nameOf(a) === nameOf(b))
          throw new ScenarioFileError(
            `${imported.origins.scenarios.get(scenario.id) ?? options.source}: scenario "${scenario.id}": cast ["${a}", "${b}"] pairs two characters named "${nameOf(a)}"; ` +
              'give one of them another name (a SCRIPT tells its speakers apart by name); nothing was imported',
          );
      }
      const id = installScenario(db, { ...scenario, casts }, scenarioContext);
      const pk = imported.pks.scenarios.get(scenario.id);
      if (pk) upsertScenarioAlias(db, pk, id);
    }
    return report;
  })();
}
