import { binomialTestP } from '../numbers/binomial-test.js';
import { fleissKappa } from '../analysis/fleiss.js';
import { countsFromTable, percentAgreement } from '../analysis/item-counts.js';
import { writeDialogues } from './dialogues-export.js';
import type { ExportContext } from './export-context.js';
import { countRaters, iteratePairVotes, listBatchRuns } from './export.queries.js';
import { type FileDigest, type FolderSink, writeText } from './folder-sink.js';
import { judgmentColumns, writeJudgmentsJsonl } from './judgments-export.js';
import { writePreferences } from './preferences-export.js';
import { PREFERENCE_PROMPT_DESCRIPTIONS } from './rater-prompt.js';
import { runCard } from './simulation-cards.js';

// A Hugging Face dataset folder: data/*.jsonl (one config per file, since their fields differ) and a dataset card
// README.md whose YAML header declares the configs, so `load_dataset("json", data_files=...)` works offline and the
// Hub viewer finds the files when the folder is pushed.

export type ComparisonSummary = {
  model_a: string;
  model_b: string;
  pairs: number;
  judgments: number;
  wins_a: number;
  wins_b: number;
  ties: number;
  win_rate_a: number | null;
  p_value: number | null;
  percent_agreement: number | null;
  fleiss_kappa: number | null;
};

/** Win counts and agreement per comparison over the judgments in scope, from per-pair vote counts. */
export function summarizeComparisons(ctx: ExportContext): ComparisonSummary[] {
  const byComparison = new Map<number, { a: string; b: string; table: number[][] }>();
  for (const row of iteratePairVotes(ctx.db, ctx.scope)) {
    let entry = byComparison.get(row.comparison_id);
    if (!entry) {
      entry = { a: row.condition_a, b: row.condition_b, table: [] };
      byComparison.set(row.comparison_id, entry);
    }
    entry.table.push([row.votes_a, row.votes_b, row.votes_tie]);
  }
  return [...byComparison.values()].map(({ a, b, table }) => {
    const sum = (k: number) => table.reduce((s, row) => s + (row[k] ?? 0), 0);
    const [winsA, winsB, ties] = [sum(0), sum(1), sum(2)];
    const counts = countsFromTable(table, ['a', 'b', 'tie']);
    return {
      model_a: a,
      model_b: b,
      pairs: table.length,
      judgments: winsA + winsB + ties,
      wins_a: winsA,
      wins_b: winsB,
      ties,
      win_rate_a: winsA + winsB > 0 ? winsA / (winsA + winsB) : null,
      p_value: binomialTestP(winsA, winsA + winsB),
      percent_agreement: percentAgreement(counts).percent,
      fleiss_kappa: fleissKappa(counts).kappa,
    };
  });
}

const fmt = (x: number | null, digits = 3) => (x === null ? 'n/a' : x.toFixed(digits));
// The card is Markdown that the Hugging Face Hub renders, and Markdown passes raw HTML through: batch names, model
// names, the question and run names are typed by people (or come from endpoints), so `&` and `<` are escaped and no
// tag can open. Table cells also lose their pipes and line breaks.
const noHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const line = (text: string) => noHtml(text).replace(/\r?\n/g, ' ');
const cell = (text: string) => line(text).replace(/\|/g, '\\|');

const JUDGMENT_FIELDS: [string, string][] = [
  ['judgment_id', 'id of the judgment'],
  ['batch_id, pair_id', 'the batch and the pair judged'],
  ['question_id', 'the question answered (the batch\'s `questions[].id`; `natural` for the single question)'],
  ['question_kind', '`preference` (which is better by the question\'s text) or `which-is-real` (which of the two really happened)'],
  ['scenario_id, scenario_category', 'the scenario (slug) and its category'],
  ['model_a, model_b', 'the two conditions compared, `MODE:model`; model_a is the comparison\'s first condition'],
  ['left', '`a` or `b`: which dialogue was shown on the left'],
  ['winner', '`model_a`, `model_b` or `tie`'],
  ['real_side', 'for a `which-is-real` question, `a` or `b`: whose dialogue is the real one (the rater was right when winner names it); null otherwise'],
  ['confidence', 'for a `which-is-real` question that asked it, how sure the rater was, 1 (a guess) to 5 (certain); null otherwise'],
  ['reason', "the rater's free-text reason, or null"],
  ['judge', 'a salted pseudonym of the rater, stable within this batch only'],
  ['provider', 'how the rater came: `prolific`, `mturk`, `link`'],
  ['is_gold, correct', 'onboarding or attention-check answer, and whether it was right (null for regular pairs)'],
  ['shown_at, submitted_at', 'ISO-8601 UTC times'],
  ['active_time_s', 'seconds the page was visible and active'],
  ['question_version', 'version of the question text the rater saw'],
  ['excluded', 'false unless exported with --include-excluded; then true for an excluded judgment, and `exclusion_reason` says why'],
  ['reallocation_id', 'in a sequential batch with `reallocate`: the reallocation that added the pair (after another comparison stopped); null for the pairs the batch was formed with'],
  ['telemetry', "`plausible` or `implausible`: whether the figures the rater's page sent fit the server's own times and the reason's length; null when the page sent none (no JavaScript)"],
  ['reason_pasted_share, paste_events, keystrokes, typing_time_s', 'the share of the reason that arrived by paste, pastes, keys pressed in the reason box and the time from the first key to the last'],
  ['hidden_time_s', 'seconds the page was hidden or unfocused while the comparison was open'],
  ['answered_before_conversation_2', 'on a phone: an answer was chosen before Conversation 2 was ever shown (null on a wide screen)'],
  ['answer_key', "how the page's first question was answered: key `1`, `2` or `0`, `pointer` (click or tap) or `other`; null when the page sent none"],
];

const PREFERENCE_FIELDS: [string, string][] = [
  ['chosen, rejected', 'the preferred and the other dialogue, each as one assistant message'],
  ['model_a, model_b, chosen_model, rejected_model', 'conditions `MODE:model`'],
  ['votes_a, votes_b, votes_tie, votes_total', 'judgments of the pair'],
  ['margin', 'votes for chosen minus votes for rejected'],
  ['agreement', 'share of the pair\'s judgments that gave the most common answer'],
];

const DIALOGUE_FIELDS: [string, string][] = [
  ['dialogue_id, run_id, run_name', 'the dialogue and the run that produced it'],
  ['condition, mode, model', '`MODE:model`; the mode is SCRIPT, AGENTS or MINDREADERS (generated), HUMANS, HUMAN_AGENT or HUMAN_SCRIPT (people; model `human` where no model took part)'],
  ['scenario, characters', 'the scenario (context, relationship, goals) and the two characters (profiles with secrets)'],
  ['turns', '`idx`, `speaker` (1 or 2), `character`, `action` (speak, non-verbal, action, none, leave), `text`'],
  ['metrics', 'turns, spoken turns, words, calls, tokens and latency'],
];

// Declared column types for the configs whose fields are known in advance. `datasets` otherwise infers each
// column's type from the file's first block (about 10 MB) and fails on a later block that disagrees: a column that
// is all null there (`correct` before the gold pairs, `reason`) or all whole numbers (`agreement` of unanimous pairs,
// JSON writes 1.0 as 1). Dialogues carry free-form `meta` (and `calls`), so their types stay inferred.
type HfFeature = { name: string; dtype: 'int64' | 'float64' | 'bool' | 'string' } | { name: string; messages: true };

const JUDGMENT_DTYPES: Record<string, 'int64' | 'float64' | 'bool' | 'string'> = {
  judgment_id: 'int64',
  batch_id: 'int64',
  pair_id: 'int64',
  question_id: 'string',
  question_kind: 'string',
  scenario_id: 'string',
  scenario_category: 'string',
  model_a: 'string',
  model_b: 'string',
  left: 'string',
  winner: 'string',
  real_side: 'string',
  confidence: 'int64',
  reason: 'string',
  judge: 'string',
  participant_id: 'string',
  study_id: 'string',
  session_id: 'string',
  provider: 'string',
  is_gold: 'bool',
  correct: 'bool',
  shown_at: 'string',
  submitted_at: 'string',
  active_time_s: 'float64',
  question_version: 'int64',
  excluded: 'bool',
  exclusion_reason: 'string',
  reallocation_id: 'int64',
  telemetry: 'string',
  reason_pasted_share: 'float64',
  paste_events: 'int64',
  keystrokes: 'int64',
  typing_time_s: 'float64',
  hidden_time_s: 'float64',
  answered_before_conversation_2: 'bool',
  answer_key: 'string',
};

/** The judgments config's features, in the order of the export's columns (which depend on the options). */
export function judgmentFeatures(ctx: ExportContext): HfFeature[] {
  return judgmentColumns(ctx).map((name) => {
    const dtype = JUDGMENT_DTYPES[name];
    if (!dtype) throw new Error(`no Hugging Face type for the judgments column ${name}`);
    return { name, dtype };
  });
}

/** The preferences config's features: the fields preferencesRecord writes, in its order. */
export const PREFERENCE_FEATURES: HfFeature[] = [
  { name: 'prompt', messages: true },
  { name: 'chosen', messages: true },
  { name: 'rejected', messages: true },
  ...(['batch_id', 'pair_id'] as const).map((name) => ({ name, dtype: 'int64' as const })),
  ...(['scenario_id', 'scenario_category', 'model_a', 'model_b', 'chosen_model', 'rejected_model'] as const).map((name) => ({ name, dtype: 'string' as const })),
  ...(['chosen_dialogue_id', 'rejected_dialogue_id', 'votes_a', 'votes_b', 'votes_tie', 'votes_total', 'margin'] as const).map((name) => ({
    name,
    dtype: 'int64' as const,
  })),
  { name: 'agreement', dtype: 'float64' },
];

/** `dataset_info` in the card's YAML header: one entry per config with declared features. */
function datasetInfoYaml(configs: [string, HfFeature[]][]): string[] {
  return [
    'dataset_info:',
    ...configs.flatMap(([config, features]) => [
      `- config_name: ${config}`,
      '  features:',
      ...features.flatMap((f) =>
        'dtype' in f
          ? [`  - name: ${f.name}`, `    dtype: ${f.dtype}`]
          : [`  - name: ${f.name}`, '    list:', '    - name: role', '      dtype: string', '    - name: content', '      dtype: string'],
      ),
    ]),
  ];
}

function fieldTable(fields: [string, string][]): string {
  return ['| field | meaning |', '|---|---|', ...fields.map(([f, m]) => `| ${f} | ${m} |`)].join('\n');
}

/**
 * What raters were asked (issue 16): the one question, or every question of the page with the one this dataset holds
 * named (judgments, preferences and results are that question's; `--question` picks another).
 */
function questionLines(ctx: ExportContext): string[] {
  const protocol = 'Raters saw two dialogues of the same scenario sample side by side, blinded (no mode, model or run shown), with the side of each condition counterbalanced';
  const questions = ctx.meta.questions;
  const held = ctx.meta.question ?? questions[0];
  if (questions.length <= 1 || !held) return [`${protocol}, and answered: "${cell(held?.text ?? ctx.batch.settings.question)}"`];
  return [
    `${protocol}, and answered ${questions.length} questions on the same page, each its own judgment:`,
    '',
    ...questions.map((q, i) => `${i + 1}. \`${q.id}\`: "${cell(q.text)}"${q.id === held.id ? ' (this dataset)' : ''}`),
    '',
    `This dataset holds the answers to question \`${held.id}\` only (judgments, preferences, results); export again with \`--question ID\` for another.`,
  ];
}

type CardFacts = { judgments: number; preferences: number; dialogues: number; comparisons: ComparisonSummary[]; cards: string[] };

/** The dataset card (README.md) of an hf export: the Hub's YAML header, the files, the protocol, the raters and results. */
export function datasetCard(ctx: ExportContext, facts: CardFacts): string {
  return [...cardYaml(ctx), ...cardFiles(ctx, facts), ...cardProtocol(ctx), ...cardResults(ctx, facts)].join('\n');
}

function cardYaml(ctx: ExportContext): string[] {
  return [
    '---',
    'license: other',
    // The Hub shows pretty_name as plain text; angle brackets are dropped rather than escaped, which would show as &lt;.
    `pretty_name: ${JSON.stringify(`simarena batch ${ctx.batch.name.replace(/[<>]/g, '')}`)}`,
    'language:',
    '- en',
    'tags:',
    '- human-evaluation',
    '- preference',
    '- social-simulation',
    'configs:',
    ...['judgments', 'preferences', 'dialogues'].flatMap((name) => [
      `- config_name: ${name}`,
      '  data_files:',
      '  - split: train',
      `    path: data/${name}.jsonl`,
    ]),
    ...datasetInfoYaml([
      ['judgments', judgmentFeatures(ctx)],
      ['preferences', PREFERENCE_FEATURES],
    ]),
    '---',
  ];
}

function cardFiles(ctx: ExportContext, facts: CardFacts): string[] {
  return [
    `# simarena batch: ${line(ctx.batch.name)}`,
    '',
    `Human pairwise judgments of social interactions (simulated in SCRIPT, AGENTS or MINDREADERS mode, or played and written by people), exported by simarena ${ctx.meta.simarena_version} on ${ctx.meta.exported_at}.`,
    '',
    '## Files',
    '',
    `- \`data/judgments.jsonl\`: ${facts.judgments} judgment(s), one per line`,
    `- \`data/preferences.jsonl\`: ${facts.preferences} preference pair(s) (prompt, chosen, rejected)`,
    `- \`data/dialogues.jsonl\`: ${facts.dialogues} dialogue(s)`,
    '- `simarena-meta.json`: simarena version, prompt versions, batch settings and export options',
    '',
    'Load a config from this folder (offline); judgments and preferences then get the column types declared in the header above:',
    '',
    '```python',
    'from datasets import load_dataset',
    'judgments = load_dataset("path/to/this/folder", "judgments", split="train")',
    'preferences = load_dataset("path/to/this/folder", "preferences", split="train")',
    'dialogues = load_dataset("path/to/this/folder", "dialogues", split="train")',
    '# or one file: load_dataset("json", data_files="data/dialogues.jsonl", split="train")',
    '```',
    '',
    '### judgments',
    '',
    fieldTable(JUDGMENT_FIELDS),
    '',
    '### preferences',
    '',
    `Prompt: ${ctx.options.prompt} (${PREFERENCE_PROMPT_DESCRIPTIONS[ctx.options.prompt]}).`,
    '',
    fieldTable([['prompt', `chat messages: ${PREFERENCE_PROMPT_DESCRIPTIONS[ctx.options.prompt]}`], ...PREFERENCE_FIELDS]),
    '',
    '### dialogues',
    '',
    fieldTable(DIALOGUE_FIELDS),
    '',
  ];
}

function cardProtocol(ctx: ExportContext): string[] {
  const s = ctx.batch.settings;
  return [
    '## Collection protocol',
    '',
    ...questionLines(ctx),
    '',
    fieldTable([
      ['context shown', s.context],
      ['judgments per pair', String(s.judgmentsPerPair)],
      ['ties allowed', s.allowTie ? 'yes' : 'no'],
      ['reason', s.reason],
      ['onboarding', s.onboarding ? `${s.onboarding.pairs} known-answer pairs, pass at ${s.onboarding.threshold}` : 'none'],
      ['attention checks', s.attentionChecks ? `${s.attentionChecks.rate} of served pairs, screened out after ${s.attentionChecks.maxFailures} failures` : 'none'],
      ['pairs per rater (cap)', String(s.perRaterCap)],
      ['recruitment', s.provider.kind],
      ['estimated minutes', String(s.estimatedMinutes)],
      ['pay', s.pay ? cell(s.pay) : 'not recorded'],
      ['prompt versions', ctx.meta.prompt_versions.join(', ') || 'not recorded'],
    ]),
    '',
    `Exclusions: ${ctx.options.includeExcluded ? 'none applied (excluded judgments are flagged with `excluded` and `exclusion_reason`)' : 'judgments of excluded or screened-out raters and of removed pairs are left out'}. ` +
      `Onboarding and attention-check answers are ${ctx.options.includeGold ? 'included, flagged by `is_gold`' : 'left out'}.`,
    '',
  ];
}

function cardResults(ctx: ExportContext, facts: CardFacts): string[] {
  const raters = countRaters(ctx.db, ctx.batch.id);
  return [
    '## Raters',
    '',
    `${raters.raters} rater session(s); ${raters.with_judgments} gave at least one judgment, ${raters.included_with_judgments} of them included. ` +
      `${raters.excluded} excluded by the researcher, ${raters.screened_out} screened out by the onboarding or attention checks.`,
    '',
    '## Results and agreement',
    '',
    'Win rate of model_a among decisive judgments, exact two-sided binomial test against 0.5, mean pairwise percent agreement and Fleiss\' kappa over the labels a, b, tie.',
    '',
    '| model_a | model_b | pairs | judgments | wins a | wins b | ties | win rate a | p | agreement | Fleiss κ |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...facts.comparisons.map(
      (c) =>
        `| ${cell(c.model_a)} | ${cell(c.model_b)} | ${c.pairs} | ${c.judgments} | ${c.wins_a} | ${c.wins_b} | ${c.ties} | ${fmt(c.win_rate_a)} | ${fmt(c.p_value, 4)} | ${fmt(c.percent_agreement)} | ${fmt(c.fleiss_kappa)} |`,
    ),
    '',
    '## Simulation cards',
    '',
    ...(facts.cards.length > 0 ? facts.cards.map((card) => noHtml(card).replace(/^#/gm, '###')) : ['No run is linked to this batch.']),
    '',
    '## Licence',
    '',
    'LICENCE PLACEHOLDER: choose a licence for this dataset (and update `license:` in the header) before publishing it. ' +
      'Dialogues are model output; check the terms of the models used.',
    '',
  ];
}

export async function writeHf(ctx: ExportContext, sink: FolderSink): Promise<{ rows: number; files: FileDigest[] }> {
  let judgments = 0;
  let preferences = 0;
  let dialogues = 0;
  const files = [
    await sink.file('data/judgments.jsonl', async (out) => {
      judgments = await writeJudgmentsJsonl(ctx, out);
    }),
    await sink.file('data/preferences.jsonl', async (out) => {
      preferences = await writePreferences(ctx, out);
    }),
    await sink.file('data/dialogues.jsonl', async (out) => {
      dialogues = await writeDialogues(ctx, out);
    }),
  ];
  const cards = listBatchRuns(ctx.db, ctx.batch.id).map((run) => runCard(ctx.db, run).markdown);
  const card = datasetCard(ctx, { judgments, preferences, dialogues, comparisons: summarizeComparisons(ctx), cards });
  files.push(await sink.file('README.md', writeText(card)));
  files.push(
    await sink.file('simarena-meta.json', writeText(`${JSON.stringify({ ...ctx.meta, rows: { judgments, preferences, dialogues } }, null, 2)}\n`)),
  );
  return { rows: judgments, files };
}
