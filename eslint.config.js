// Lint: rules are errors or off, never warnings (a warning nobody reads is noise).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Dependencies point one way (src/README.md): each folder may import only the folders listed for it, so no import
// climbs back up and no two folders form a cycle. errors/ (the one user-facing error type) is the lowest, then numbers/
// (pure arithmetic); clock.ts and config.ts sit just above web/ and db/.
const LOWER = {
  errors: [],
  numbers: ['errors'],
  db: ['numbers', 'errors'],
  web: ['db', 'numbers', 'errors'],
  audit: ['db', 'web', 'numbers', 'errors'],
  scenarios: ['audit', 'db', 'web', 'numbers', 'errors'],
  generation: ['scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  demo: ['generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  batches: ['demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  rating: ['batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  // Live role-play (issue 52): the lobby, the turns, the relay; uses rating's identity rules and batches' collections.
  live: ['rating', 'batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  analysis: ['rating', 'batches', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  export: ['analysis', 'rating', 'batches', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  // LLM judges of a batch's pairs: read batches and rating's comparison view, call models through generation.
  evaluation: ['rating', 'batches', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  // Recruiting platforms (Prolific, MTurk): participants' payment decisions, the operations ledger, the platform clients.
  recruiting: ['analysis', 'live', 'rating', 'batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  auth: ['audit', 'db', 'web', 'numbers', 'errors'],
  console: ['recruiting', 'evaluation', 'auth', 'export', 'analysis', 'live', 'rating', 'batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  api: ['console', 'recruiting', 'evaluation', 'auth', 'export', 'analysis', 'live', 'rating', 'batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
  cli: ['recruiting', 'evaluation', 'auth', 'export', 'analysis', 'live', 'rating', 'batches', 'demo', 'generation', 'scenarios', 'audit', 'db', 'web', 'numbers', 'errors'],
};
const TOP_FILES = ['app', 'server', 'first-start'];
const BASE_FILES = { errors: [], numbers: [], db: [], web: ['clock'] };

function importDirection(folder) {
  const lower = LOWER[folder];
  const higher = Object.keys(LOWER).filter((other) => other !== folder && !lower.includes(other));
  const files = [...TOP_FILES, ...['clock', 'config'].filter((f) => !(BASE_FILES[folder] ?? ['clock', 'config']).includes(f))];
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...higher.map((other) => `../${other}/*`), ...files.map((f) => `../${f}.js`)],
              message: `src/${folder}/ may import only ${[...lower.map((f) => `${f}/`), ...(BASE_FILES[folder] ?? ['clock', 'config'])].join(', ') || 'nothing else in src/'} (src/README.md: dependencies point one way).`,
            },
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'error',
    },
  },
  // Short functions: a handler that outgrows a screen splits into named steps. A declarative table (paths, roles and
  // named handlers only) that needs more would be named here, with its reason; none does today.
  { files: ['src/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] } },
  { files: ['public/**/*.js'], languageOptions: { globals: { ...globals.browser } } },
  { files: ['scripts/**'], rules: { 'no-console': 'off' } },
  ...Object.keys(LOWER).map(importDirection),
  {
    files: ['src/config.ts', 'src/clock.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: [...Object.keys(LOWER).filter((f) => f !== 'web' && f !== 'errors').map((f) => `./${f}/*`), ...TOP_FILES.map((f) => `./${f}.js`)], message: 'config.ts and clock.ts may import only web/ and errors/ (src/README.md).' }] }] },
  },
  {
    files: ['src/first-start.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['./app.js', './server.js', './cli/*', './console/*', './api/*'], message: 'first-start.ts sits below the app and its routes.' }] }] },
  },
  {
    files: ['src/app.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['./server.js', './cli/*'], message: 'app.ts builds the app; only server.ts boots it.' }] }] },
  },
);
