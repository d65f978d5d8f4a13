// Writes src/db/baseline.sql: the schema after every numbered migration up to the newest (or --version N), read back
// from a database migrated the long way. Run it when squashing migrations into a new baseline:
//   npx tsx scripts/db/write-baseline.ts [--version N]
// then check `npx vitest run test/db/baseline.test.ts`. Migrations after the baseline's version keep applying on top.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/db/connection.js';
import { schemaStatements } from '../../src/db/baseline.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';

const flag = process.argv.indexOf('--version');
const all = listMigrations();
const version = flag >= 0 ? Number(process.argv[flag + 1]) : Math.max(...all.map((m) => m.version));
const upTo = all.filter((m) => m.version <= version);
const last = upTo.at(-1);
if (!last) throw new Error(`no migration at or below ${version}`);
const db = openDatabase(':memory:');
migrate(db, upTo, null);
const body = schemaStatements(db)
  .map((sql) => `${sql};`)
  .join('\n\n');
const header = [
  `-- simarena schema baseline: migration ${String(last.version).padStart(3, '0')} (${last.name})`,
  '-- A new database is created from this file, then takes the numbered migrations after it; a database at an earlier',
  '-- version upgrades through the numbered migrations. Written by scripts/db/write-baseline.ts from those migrations:',
  '-- do not edit by hand (test/db/baseline.test.ts compares both ways).',
].join('\n');
const out = fileURLToPath(new URL('../../src/db/baseline.sql', import.meta.url));
writeFileSync(out, `${header}\n\n${body}\n`);
db.close();
console.log(`wrote ${out}: ${last.name}`);
