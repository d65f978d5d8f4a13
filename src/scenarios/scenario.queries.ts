import type { Db } from '../db/connection.js';
import { parseJsonColumn } from '../db/json-column.js';
import { type Category, type Character, type Fact, factAliasesSchema, type Relationship, type Scenario } from './scenario.schema.js';

export type CharacterRow = {
  id: string;
  first_name: string;
  last_name: string;
  age: number | null;
  gender: string;
  pronouns: string;
  occupation: string;
  public_info: string;
  personality_and_values: string;
  decision_making_style: string;
  secret: string;
  big_five: string;
  moral_values: string;
  schwartz_values: string;
  source: string;
};

export type ScenarioRow = {
  id: string;
  title: string;
  category: Category;
  context: string;
  relationship: Relationship;
  goal_1: string;
  goal_2: string;
  source: string;
};

export type CastRow = { id: number; scenario_id: string; character_1_id: string; character_2_id: string; position: number };

const CHARACTER_COLUMNS =
  'id, first_name, last_name, age, gender, pronouns, occupation, public_info, personality_and_values, decision_making_style, secret, big_five, moral_values, schwartz_values, source';
const SCENARIO_COLUMNS = 'id, title, category, context, relationship, goal_1, goal_2, source';

export function upsertCharacter(db: Db, character: Character, source: string, now: string): void {
  db.prepare(
    `INSERT INTO characters (${CHARACTER_COLUMNS}, created_at)
     VALUES (:id, :firstName, :lastName, :age, :gender, :pronouns, :occupation, :publicInfo, :personalityAndValues,
             :decisionMakingStyle, :secret, :bigFive, :moralValues, :schwartzValues, :source, :now)
     ON CONFLICT (id) DO UPDATE SET first_name = excluded.first_name, last_name = excluded.last_name, age = excluded.age,
       gender = excluded.gender, pronouns = excluded.pronouns, occupation = excluded.occupation,
       public_info = excluded.public_info, personality_and_values = excluded.personality_and_values,
       decision_making_style = excluded.decision_making_style, secret = excluded.secret, big_five = excluded.big_five,
       moral_values = excluded.moral_values, schwartz_values = excluded.schwartz_values, source = excluded.source`,
  ).run({
    ...character,
    moralValues: JSON.stringify(character.moralValues),
    schwartzValues: JSON.stringify(character.schwartzValues),
    source,
    now,
  });
}

/** Inserts or updates a scenario and adds its casts (existing casts are kept: dialogues refer to them). */
export function upsertScenario(db: Db, scenario: Scenario, source: string, now: string): void {
  db.prepare(
    `INSERT INTO scenarios (${SCENARIO_COLUMNS}, created_at)
     VALUES (:id, :title, :category, :context, :relationship, :goal1, :goal2, :source, :now)
     ON CONFLICT (id) DO UPDATE SET title = excluded.title, category = excluded.category, context = excluded.context,
       relationship = excluded.relationship, goal_1 = excluded.goal_1, goal_2 = excluded.goal_2, source = excluded.source`,
  ).run({
    id: scenario.id,
    title: scenario.title,
    category: scenario.category,
    context: scenario.context,
    relationship: scenario.relationship,
    goal1: scenario.goals[0],
    goal2: scenario.goals[1],
    source,
    now,
  });
  addCasts(db, scenario.id, scenario.casts);
  if (scenario.facts !== undefined) replaceScenarioFacts(db, scenario.id, scenario.facts);
}

/** Adds the casts a scenario does not have yet (a cast's position is its place in `casts`); returns how many were new. */
export function addCasts(db: Db, scenarioId: string, casts: [string, string][]): number {
  const insertCast = db.prepare(
    `INSERT INTO casts (scenario_id, character_1_id, character_2_id, position)
     VALUES (:scenarioId, :first, :second, :position)
     ON CONFLICT (scenario_id, character_1_id, character_2_id) DO NOTHING`,
  );
  let added = 0;
  casts.forEach(([first, second], position) => {
    added += insertCast.run({ scenarioId, first, second, position }).changes;
  });
  return added;
}

/** A scenario's marked private facts, replaced as a whole (they are read together by the dialogue metrics). */
export function replaceScenarioFacts(db: Db, scenarioId: string, facts: Fact[]): void {
  db.prepare('DELETE FROM scenario_facts WHERE scenario_id = :scenarioId').run({ scenarioId });
  const insert = db.prepare(
    `INSERT INTO scenario_facts (scenario_id, position, owner, kind, value, aliases)
     VALUES (:scenarioId, :position, :owner, :kind, :value, :aliases)`,
  );
  facts.forEach((f, position) => insert.run({ scenarioId, position, owner: f.owner, kind: f.kind, value: f.value, aliases: JSON.stringify(f.aliases) }));
}

export function listScenarioFacts(db: Db, scenarioId: string): Fact[] {
  return db
    .prepare<{ scenarioId: string }, { owner: 1 | 2; kind: Fact['kind']; value: string; aliases: string }>(
      'SELECT owner, kind, value, aliases FROM scenario_facts WHERE scenario_id = :scenarioId ORDER BY position',
    )
    .all({ scenarioId })
    .map((r) => ({ owner: r.owner, kind: r.kind, value: r.value, aliases: parseJsonColumn(factAliasesSchema, r.aliases, `scenario_facts.aliases of scenario ${scenarioId}`) }));
}

export function listScenarios(db: Db): (ScenarioRow & { casts: number })[] {
  return db
    .prepare<[], ScenarioRow & { casts: number }>(
      `SELECT s.id, s.title, s.category, s.context, s.relationship, s.goal_1, s.goal_2, s.source,
              (SELECT count(*) FROM casts c WHERE c.scenario_id = s.id) AS casts
       FROM scenarios s ORDER BY s.category, s.id`,
    )
    .all();
}

export function getScenario(db: Db, id: string): ScenarioRow | undefined {
  return db.prepare<{ id: string }, ScenarioRow>(`SELECT ${SCENARIO_COLUMNS} FROM scenarios WHERE id = :id`).get({ id });
}

export function getCharacter(db: Db, id: string): CharacterRow | undefined {
  return db.prepare<{ id: string }, CharacterRow>(`SELECT ${CHARACTER_COLUMNS} FROM characters WHERE id = :id`).get({ id });
}

export function characterExists(db: Db, id: string): boolean {
  return db.prepare('SELECT 1 FROM characters WHERE id = :id').get({ id }) !== undefined;
}

export function listCasts(db: Db, scenarioId: string): CastRow[] {
  return db
    .prepare<{ scenarioId: string }, CastRow>(
      'SELECT id, scenario_id, character_1_id, character_2_id, position FROM casts WHERE scenario_id = :scenarioId ORDER BY position, id',
    )
    .all({ scenarioId });
}

export function getCast(db: Db, castId: number): CastRow | undefined {
  return db
    .prepare<{ castId: number }, CastRow>(
      'SELECT id, scenario_id, character_1_id, character_2_id, position FROM casts WHERE id = :castId',
    )
    .get({ castId });
}

export function countScenarios(db: Db): number {
  return db.prepare('SELECT count(*) FROM scenarios').pluck().get() as number;
}

/** Characters whose full name ("first last", as Sotopia's episodes name them) is `name`. */
export function findCharactersByName(db: Db, name: string): CharacterRow[] {
  return db
    .prepare<{ name: string }, CharacterRow>(
      `SELECT ${CHARACTER_COLUMNS} FROM characters WHERE trim(first_name || ' ' || last_name) = trim(:name) ORDER BY id`,
    )
    .all({ name });
}

/**
 * The cast of two characters in a scenario, added after the scenario's other casts when it is missing
 * (dialogues imported from elsewhere may pair characters the library never paired).
 */
export function ensureCast(db: Db, scenarioId: string, first: string, second: string): CastRow {
  db.prepare(
    `INSERT INTO casts (scenario_id, character_1_id, character_2_id, position)
     VALUES (:scenarioId, :first, :second,
             (SELECT coalesce(max(position) + 1, 0) FROM casts WHERE scenario_id = :scenarioId))
     ON CONFLICT (scenario_id, character_1_id, character_2_id) DO NOTHING`,
  ).run({ scenarioId, first, second });
  return db
    .prepare<{ scenarioId: string; first: string; second: string }, CastRow>(
      `SELECT id, scenario_id, character_1_id, character_2_id, position FROM casts
       WHERE scenario_id = :scenarioId AND character_1_id = :first AND character_2_id = :second`,
    )
    .get({ scenarioId, first, second }) as CastRow;
}

/** The character a Sotopia pk (or other alias) names, if it was imported with one. */
export function findCharacterByAlias(db: Db, alias: string): string | undefined {
  return db.prepare<{ alias: string }, string>('SELECT character_id FROM character_aliases WHERE alias = :alias').pluck().get({ alias });
}

export function findScenarioByAlias(db: Db, alias: string): string | undefined {
  return db.prepare<{ alias: string }, string>('SELECT scenario_id FROM scenario_aliases WHERE alias = :alias').pluck().get({ alias });
}

export function upsertCharacterAlias(db: Db, alias: string, characterId: string): void {
  db.prepare(
    `INSERT INTO character_aliases (alias, character_id) VALUES (:alias, :characterId)
     ON CONFLICT (alias) DO UPDATE SET character_id = excluded.character_id`,
  ).run({ alias, characterId });
}

export function upsertScenarioAlias(db: Db, alias: string, scenarioId: string): void {
  db.prepare(
    `INSERT INTO scenario_aliases (alias, scenario_id) VALUES (:alias, :scenarioId)
     ON CONFLICT (alias) DO UPDATE SET scenario_id = excluded.scenario_id`,
  ).run({ alias, scenarioId });
}

/** The first Sotopia pk a character was imported with (for the Sotopia export), if any. */
export function firstCharacterAlias(db: Db, characterId: string): string | undefined {
  return db
    .prepare<{ characterId: string }, string>('SELECT alias FROM character_aliases WHERE character_id = :characterId ORDER BY rowid LIMIT 1')
    .pluck()
    .get({ characterId });
}

/** Scenarios with a cast in which the character plays. */
export function listScenariosCasting(db: Db, characterId: string): string[] {
  return db
    .prepare<{ characterId: string }, string>(
      'SELECT DISTINCT scenario_id FROM casts WHERE character_1_id = :characterId OR character_2_id = :characterId ORDER BY scenario_id',
    )
    .pluck()
    .all({ characterId });
}

/**
 * How many dialogues (of any origin and state) were written for a scenario. Read here, beside the scenario,
 * because an import must not change the text under them, and scenarios may not depend on generation.
 */
export function countDialoguesOfScenario(db: Db, scenarioId: string): number {
  return db.prepare<{ scenarioId: string }, number>('SELECT count(*) FROM dialogues WHERE scenario_id = :scenarioId').pluck().get({ scenarioId }) ?? 0;
}
