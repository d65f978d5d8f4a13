import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import type { Db } from '../db/connection.js';
import { jsonSyntaxMessage } from '../web/json-syntax.js';
import { ScenarioFileError, describeRecord } from './library-error.js';
import { type Character, LIBRARY_RECORD_SHAPES, type Scenario, characterSchema, fieldList, scenarioSchema } from './scenario.schema.js';
import { characterExists, upsertCharacter, upsertScenario } from './scenario.queries.js';

export type Library = { characters: Character[]; scenarios: Scenario[] };

export const builtInLibraryDir = new URL('../../data/scenarios/', import.meta.url).pathname;

export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ScenarioFileError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ScenarioFileError(`${path}: is not valid JSON at ${jsonSyntaxMessage(text, error)}`);
  }
}

/** Validates one record; the error names the file, the record (position and id) and the field. */
export function parseRecord<S extends z.ZodType>(file: string, index: number, record: unknown, schema: S): z.infer<S> {
  const result = schema.safeParse(record);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? `field "${issue.path.join('.')}"` : 'record';
  // A key of another format (or misspelt): named with the fields this record may have, so the expected shape is on the screen.
  const unknown = result.error.issues.find((i) => i.code === 'unrecognized_keys');
  const keys = unknown?.code === 'unrecognized_keys' ? unknown.keys.map((k) => `"${k}"`).join(', ') : '';
  const expected = unknown && schema instanceof z.ZodObject ? `; unknown key(s) ${keys}: a record here has the fields ${fieldList(schema)}` : '';
  throw new ScenarioFileError(`${file}: ${describeRecord(index, record)}: ${field} ${issue?.message ?? 'is invalid'}${expected}`);
}

export function parseRecords<S extends z.ZodType>(file: string, records: unknown, schema: S): z.infer<S>[] {
  if (!Array.isArray(records)) throw new ScenarioFileError(`${file}: expected a JSON array of records, each ${LIBRARY_RECORD_SHAPES}`);
  return records.map((record, index) => parseRecord(file, index, record, schema));
}

/** Reads a library folder: characters.json plus any other *.json files holding scenarios. */
export function readLibrary(dir: string): Library {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  const library: Library = { characters: [], scenarios: [] };
  for (const file of files) {
    const path = join(dir, file);
    const records = readJsonFile(path);
    if (basename(file) === 'characters.json') library.characters.push(...parseRecords(path, records, characterSchema));
    else library.scenarios.push(...parseRecords(path, records, scenarioSchema));
  }
  checkLibrary(library, dir);
  return library;
}

function checkLibrary(library: Library, where: string, db?: Db): void {
  const known = new Set<string>();
  for (const c of library.characters) {
    if (known.has(c.id)) throw new ScenarioFileError(`${where}: character id "${c.id}" appears twice`);
    known.add(c.id);
  }
  const scenarioIds = new Set<string>();
  for (const s of library.scenarios) {
    if (scenarioIds.has(s.id)) throw new ScenarioFileError(`${where}: scenario id "${s.id}" appears twice`);
    scenarioIds.add(s.id);
    for (const id of s.casts.flat()) {
      if (!known.has(id) && !(db && characterExists(db, id)))
        throw new ScenarioFileError(`${where}: scenario "${s.id}": field "casts" names unknown character "${id}"`);
    }
  }
}

/** Writes a library in one transaction; returns what was stored. */
export function installLibrary(db: Db, library: Library, source: string, now: string): { characters: number; scenarios: number } {
  checkLibrary(library, source, db);
  db.transaction(() => {
    for (const character of library.characters) upsertCharacter(db, character, source, now);
    for (const scenario of library.scenarios) upsertScenario(db, scenario, source, now);
  })();
  return { characters: library.characters.length, scenarios: library.scenarios.length };
}
