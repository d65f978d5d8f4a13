import type { AnalysisReport } from './analysis-report.js';
import { paperTables } from './paper-report-tables.js';
import { againstHumansTable, realismSentences, realismTables } from './realism-report-tables.js';
import { raterCount, RATERS_TABLE_ROWS } from './page-report.js';
import { ci, num, pct, pValue, type Table } from './report-format.js';

/** One titled table of the report, with the note that says how to read it. */
type ReportSection = { title: string; note?: string; table: Table };

/** The report's tables as plain rows, shared by the Markdown and HTML renderers so both always say the same. */
export function reportTables(report: AnalysisReport): ReportSection[] {
  const sections: (ReportSection | null)[] = [
    ...realismTables(report),
    winRatesTable(report),
    againstHumansTable(report),
    perModelTable(report),
    byCategoryTable(report),
    byScenarioTable(report),
    agreementTable(report),
    bradleyTerryTable(report),
    positionBiasTable(report),
    lengthControlTable(report),
    sampleSizeTable(report),
    dawidSkeneTable(report),
    ratersTable(report),
    dialoguesTable(report),
    ...paperTables(report),
    exclusionsTable(report),
    sensitivityTable(report),
  ];
  return sections.filter((s): s is ReportSection => s !== null);
}

function winRatesTable(report: AnalysisReport): ReportSection {
  return {
    title: 'Win rates',
    note: 'Win rate of a among decisive judgments (ties excluded), Wilson 95% interval, exact two-sided sign test; ties as half; per-pair majority; cluster bootstrap.',
    table: {
      headers: ['a', 'b', 'n', 'wins a', 'wins b', 'ties', 'win rate a', 'Wilson 95%', 'p', 'ties as half', 'majority of pairs', 'bootstrap 95%'],
      rows: report.comparisons.map((c) => [
        c.a, c.b, c.n, c.wins_a, c.wins_b, c.ties, pct(c.win_rate_a), ci(c.ci95), pValue(c.p_value),
        pct(c.ties_half.win_rate_a), `${pct(c.majority.win_rate_a)} ${ci(c.majority.ci95)}`, `${ci(c.bootstrap.ci95)} (${c.bootstrap.cluster}${c.bootstrap.warning ? `, only ${c.bootstrap.n_clusters}: read Wilson` : ''})`,
      ]),
    },
  };
}

function perModelTable(report: AnalysisReport): ReportSection | null {
  if (!(report.by_model.length > 1 || report.comparisons.length > 1)) return null;
  return {
    title: 'Per model',
    note: 'Each comparison within one model: does the mode effect hold for every model?',
    table: {
      headers: ['model', 'a', 'b', 'n', 'win rate a', 'Wilson 95%'],
      rows: report.by_model.flatMap((m) => m.comparisons.map((c) => [m.model, c.a, c.b, c.n, pct(c.win_rate_a), ci(c.ci95)])),
    },
  };
}

function byCategoryTable(report: AnalysisReport): ReportSection | null {
  const cat = report.comparisons.flatMap((c) => c.by_category.map((k) => [`${c.a} vs ${c.b}`, k.key, k.n, k.wins_a, k.wins_b, k.ties, pct(k.win_rate_a), ci(k.ci95), pValue(k.p_value)]));
  if (cat.length === 0) return null;
  return { title: 'By scenario category', note: 'The win rate of a within cooperative, competitive and mixed scenarios: where the difference comes from.', table: { headers: ['comparison', 'category', 'n', 'wins a', 'wins b', 'ties', 'win rate a', 'Wilson 95%', 'p'], rows: cat } };
}

function byScenarioTable(report: AnalysisReport): ReportSection | null {
  const scen = report.comparisons.flatMap((c) => c.by_scenario.map((k) => [`${c.a} vs ${c.b}`, k.key, k.n, k.wins_a, k.wins_b, k.ties, pct(k.win_rate_a), ci(k.ci95)]));
  if (scen.length === 0) return null;
  return { title: 'By scenario', note: 'The win rate of a within each scenario; few judgments each, so read the intervals before the point estimates.', table: { headers: ['comparison', 'scenario', 'n', 'wins a', 'wins b', 'ties', 'win rate a', 'Wilson 95%'], rows: scen } };
}

function agreementTable(report: AnalysisReport): ReportSection {
  const agreementRows = [
    ...report.comparisons.map((c) => ({ name: `${c.a} vs ${c.b}`, a: c.agreement })),
    ...(report.comparisons.length > 1 ? [{ name: 'whole batch', a: report.agreement }] : []),
  ];
  return {
    title: 'Agreement',
    note: 'Labels are the condition chosen or TIE, so screen position does not enter agreement. A dash means undefined for the data; the JSON report gives the reason.',
    table: {
      headers: ['scope', 'categories', 'percent', 'majority share', 'Fleiss kappa', 'variant', 'Krippendorff alpha', 'Gwet AC1', 'mean Cohen kappa'],
      rows: agreementRows.map(({ name, a }) => [
        name, `${a.categories.join(', ')} (${a.categories_from})`, pct(a.percent), pct(a.majority_share), num(a.fleiss_kappa), a.fleiss_variant ?? '–',
        num(a.krippendorff_alpha), num(a.gwet_ac1), num(a.cohen_kappa_mean),
      ]),
    },
  };
}

function bradleyTerryTable(report: AnalysisReport): ReportSection | null {
  if (!report.bradley_terry) return null;
  return {
    title: 'Bradley-Terry scores',
    note: report.bradley_terry.groups
      ? `Each group's anchor = 1000, 400·log10 scale, ties as half a win; bootstrap 95% intervals. ${report.bradley_terry.note ?? ''}${report.bradley_terry.reason ? ` ${report.bradley_terry.reason}` : ''}`
      : `Anchor ${report.bradley_terry.anchor} = 1000, 400·log10 scale, ties as half a win; bootstrap 95% intervals.${report.bradley_terry.reason ? ` ${report.bradley_terry.reason}` : ''}`,
    table: report.bradley_terry.groups
      ? {
          headers: ['condition', 'anchor (= 1000)', 'score', '95% interval'],
          rows: report.bradley_terry.conditions.map((c) => [c.condition, c.anchor ?? '–', num(c.score, 1), c.ci95 ? `[${num(c.ci95[0], 1)}, ${num(c.ci95[1], 1)}]` : '–']),
        }
      : {
          headers: ['condition', 'score', '95% interval'],
          rows: report.bradley_terry.conditions.map((c) => [c.condition, num(c.score, 1), c.ci95 ? `[${num(c.ci95[0], 1)}, ${num(c.ci95[1], 1)}]` : '–']),
        },
  };
}

function positionBiasTable(report: AnalysisReport): ReportSection {
  return {
    title: 'Position bias',
    note: 'How often raters chose the dialogue shown on the left (50% = no bias), and the win rate of a by the side a was shown on.',
    table: {
      headers: ['comparison', 'n', 'left chosen', '95%', 'p vs 0.5', 'win rate a, a left', 'win rate a, a right'],
      rows: report.comparisons.map((c) => [
        `${c.a} vs ${c.b}`, c.position_bias.n, pct(c.position_bias.left_rate), ci(c.position_bias.ci95), pValue(c.position_bias.p_value),
        pct(c.position_bias.a_shown_left.win_rate_a), pct(c.position_bias.a_shown_right.win_rate_a),
      ]),
    },
  };
}

function lengthControlTable(report: AnalysisReport): ReportSection {
  return {
    title: 'Length control',
    note: 'Logistic regression of "a won" on (a − b)/(a + b) words per turn (after Chatbot Arena\'s style control); the adjusted win rate is the prediction at equal length.',
    table: {
      headers: ['comparison', 'words/turn a', 'words/turn b', 'raw win rate a', 'adjusted win rate a', '95%', 'length coefficient'],
      rows: report.comparisons.map((c) => [
        `${c.a} vs ${c.b}`, num(c.length_control.mean_words_per_turn_a, 1), num(c.length_control.mean_words_per_turn_b, 1), pct(c.length_control.raw_win_rate_a),
        pct(c.length_control.adjusted_win_rate_a), ci(c.length_control.ci95), c.length_control.length_coef === null ? (c.length_control.reason ?? '–') : `${num(c.length_control.length_coef)} ± ${num(c.length_control.length_coef_se)}`,
      ]),
    },
  };
}

function sampleSizeTable(report: AnalysisReport): ReportSection {
  return {
    title: 'Sample size',
    note: 'The 95% interval half-width reached now, the target, and the judgments still needed to reach it (design effect for raters and pairs included).',
    table: {
      headers: ['comparison', 'half-width now', 'target', 'design effect', 'decisive needed', 'judgments still needed'],
      rows: report.comparisons.map((c) => [
        `${c.a} vs ${c.b}`, pct(c.sample_size.current_half_width), pct(c.sample_size.target_half_width), num(c.sample_size.design_effect, 2),
        c.sample_size.decisive_needed ?? '–', c.sample_size.judgments_needed ?? '–',
      ]),
    },
  };
}

function dawidSkeneTable(report: AnalysisReport): ReportSection | null {
  if (!report.comparisons.some((c) => c.dawid_skene)) return null;
  return {
    title: 'Dawid–Skene (robustness view)',
    note: 'Each pair\'s label inferred with every rater weighted by estimated accuracy (Dawid and Skene 1979), as a check on the majority vote.',
    table: {
      headers: ['comparison', 'pairs a', 'pairs b', 'pairs tie', 'win rate a'],
      rows: report.comparisons.map((c) => [`${c.a} vs ${c.b}`, c.dawid_skene?.pairs_a ?? '–', c.dawid_skene?.pairs_b ?? '–', c.dawid_skene?.pairs_tie ?? '–', pct(c.dawid_skene?.win_rate_a)]),
    },
  };
}

function ratersTable(report: AnalysisReport): ReportSection {
  const shown = [...report.raters].sort((x, y) => y.judgments - x.judgments).slice(0, RATERS_TABLE_ROWS);
  // Each flag shown once with the rule behind it (issue 51); a report stored before flags were kept has none.
  const rules = new Map<string, string>();
  for (const r of shown) for (const f of r.flags ?? []) rules.set(f.flag, `${f.flag}: ${f.rule}${f.exclusion_ground ? ' (declared grounds for exclusion)' : ''}`);
  const flagsNote = rules.size > 0 ? ` Flags: ${[...rules.values()].join('; ')}.` : '';
  return {
    title: 'Raters',
    note: `Each rater's attention-check accuracy, agreement with the other raters' majority on the same pairs, speed, left-choice rate and flags.${flagsNote}${raterCount(report) > RATERS_TABLE_ROWS ? ` The first ${RATERS_TABLE_ROWS} of ${raterCount(report)} raters by number of judgments; the JSON report has all.` : ''}`,
    table: {
      headers: ['rater', 'judgments', 'attention accuracy', 'agreement with others', 'median seconds', 'left rate', 'Dawid–Skene accuracy', 'flags'],
      rows: shown.map((r) => [
        r.rater, r.judgments, pct(r.attention_accuracy), pct(r.loo_agreement), num(r.median_seconds, 1), pct(r.left_rate), pct(r.ds_accuracy), (r.flags ?? []).map((f) => f.flag).join(', ') || '–',
      ]),
    },
  };
}

function dialoguesTable(report: AnalysisReport): ReportSection | null {
  if (report.dialogue_metrics.length === 0) return null;
  return {
    title: 'Dialogues',
    note: 'What raters were shown, per condition: length, non-verbal share, repetition and who left the conversation.',
    table: {
      headers: ['condition', 'dialogues', 'turns', 'words per turn', 'non-verbal share', 'repetition', 'left share', 'left at turn', 'left by 1 / 2'],
      rows: report.dialogue_metrics.map((d) => [
        d.condition, d.dialogues, num(d.turns_per_dialogue, 1), num(d.words_per_turn, 1), pct(d.non_verbal_share), pct(d.repetition), pct(d.left_share),
        num(d.left_at_turn, 1), `${d.left_by.speaker_1} / ${d.left_by.speaker_2}`,
      ]),
    },
  };
}

export function exclusionsTable(report: AnalysisReport): ReportSection {
  return {
    title: 'Exclusions',
    note: 'Applied before every statistic.',
    table: {
      headers: ['what', 'reason', 'judgments'],
      rows: [
        ...report.exclusions.raters.map((r) => [`rater ${r.rater}`, r.reason, r.judgments]),
        ...report.exclusions.dropped.map((d) => ['judgments', d.reason, d.judgments]),
      ],
    },
  };
}

function sensitivityTable(report: AnalysisReport): ReportSection | null {
  const sens = report.sensitivity;
  // A report stored before issue 51 has the older shape: not drawn (it is recomputed when next asked for).
  if (!(sens && Array.isArray(sens.dropped_raters) && sens.dropped_raters.length > 0)) return null;
  const points = (x: number | null) => (x === null ? '–' : `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}`);
  return {
    title: 'Sensitivity to flagged raters',
    note: `${sens.sentence} On pair majorities (a pair counts for the condition most of its raters chose), ${sens.interval}; raters with a flag the batch declared grounds for exclusion left out here only, never excluded by this table (docs/researcher/quality-signals.md).`,
    table: {
      headers: ['a', 'b', 'pairs', 'raters', 'win rate a', '95% (rater-clustered)', 'pairs without', 'raters without', 'win rate a without', '95% without', 'change (points)', 'conclusion', 'conclusion without'],
      rows: sens.comparisons.map((c) => [
        c.a, c.b, c.full.decisive_pairs, c.full.raters, pct(c.full.win_rate_a), ci(c.full.ci95),
        c.without.decisive_pairs, c.without.raters, pct(c.without.win_rate_a), ci(c.without.ci95), points(c.change), c.full.conclusion, c.without.conclusion,
      ]),
    },
  };
}

/** Issue 16: how often one rater's answers to the later questions match their answer to the first; null for one question. */
export function crossQuestionTable(report: AnalysisReport): { title: string; note: string; table: Table } | null {
  const cross = report.cross_question;
  if (!cross) return null;
  return {
    title: 'Agreement across questions',
    note: `For each later question, among the assignments (one rater on one pair) that answered it and the first question (${cross.reference}): how often both answers named the same winner (a tie counts as its own answer), and the same among assignments where neither answer was a tie.`,
    table: {
      headers: ['question', 'assignments', 'same winner', 'same winner share', 'both decisive', 'same among decisive', 'share among decisive'],
      rows: cross.rows.map((r) => [r.question_id, r.assignments, r.same_winner, pct(r.same_winner_share), r.both_decisive, r.same_among_decisive, pct(r.same_among_decisive_share)]),
    },
  };
}

/** The tables of one question's section: rater quality only on the first question (attention checks are answered there). */
export function questionTables(report: AnalysisReport, index: number): { title: string; note?: string; table: Table }[] {
  return reportTables(report).filter((t) => index === 0 || t.title !== 'Raters');
}

export function sourceLine(report: AnalysisReport): string {
  const src = report.source.kind === 'batch' ? `batch ${report.source.batch_id} (${report.source.name})` : `file ${report.source.path}`;
  return `${src}: ${report.n_judgments} judgments, ${report.n_pairs} pairs, ${report.n_raters} raters; seed ${report.settings.seed}, ${report.settings.bootstrap} bootstrap replicates; computed ${report.generated_at}`;
}

/**
 * The headline of a report with no judgment to analyse (issue 49), or null: said once at the top instead of an empty
 * table in every section. Judgments left out with excluded raters are counted, so "none yet" is not said of those.
 */
export function noJudgmentsHeadline(report: AnalysisReport): string | null {
  if (report.n_judgments > 0) return null;
  const src = report.source.kind === 'batch' ? `Batch ${report.source.batch_id} (${report.source.name})` : `The file ${report.source.path}`;
  const left = report.exclusions.raters.reduce((n, r) => n + r.judgments, 0) + report.exclusions.dropped.reduce((n, d) => n + d.judgments, 0);
  return left > 0
    ? `Nothing to analyse: every judgment of ${src.replace(/^The/, 'the')} (${left}) was left out with an excluded rater or a dropped row; see the exclusions.`
    : `No judgments yet: ${src} has no accepted judgment, so there is nothing to analyse. Run this again once raters have answered.`;
}

/**
 * One sentence per comparison with the numbers a results section needs (estimate, both intervals, test, n, ties,
 * agreement), so the report's headline can be quoted without reassembling it from the tables.
 */
/** The summary's heading: for a sequential batch, says that it ignores the design (its result comes first). */
export function summaryTitle(report: AnalysisReport): string {
  return report.sequential ? 'Summary over all judgments (ignores the sequential design, counts judgments after a stop)' : 'Summary';
}

export function summarySentences(report: AnalysisReport): string[] {
  // A which-is-real question's comparisons count the conversation taken for real, not a preference: its summary is
  // the realism section's (issue 53).
  return report.realism ? realismSentences(report) : comparisonSentences(report);
}

function comparisonSentences(report: AnalysisReport): string[] {
  return report.comparisons.map((c) => {
    const decisive = c.wins_a + c.wins_b;
    if (c.win_rate_a === null) return `${c.a} vs ${c.b}: no decisive judgment among ${c.n} (${c.ties} ties); no win rate.`;
    const boot = c.bootstrap.ci95 ? `; ${c.bootstrap.cluster}-cluster bootstrap 95% CI ${ci(c.bootstrap.ci95)}${c.bootstrap.warning ? ` (only ${c.bootstrap.n_clusters} clusters: likely too narrow)` : ''}` : '';
    // Two decimals, without the "-0.00" that a tiny negative coefficient would otherwise print.
    const two = (x: number | null) => (x !== null && Math.abs(x) < 0.005 ? '0.00' : num(x, 2));
    const kappa = c.agreement.krippendorff_alpha === null ? '' : `; Krippendorff's alpha ${two(c.agreement.krippendorff_alpha)}, Gwet's AC1 ${two(c.agreement.gwet_ac1)}`;
    const p = c.p_value === null ? '' : `, exact two-sided sign test p = ${pValue(c.p_value)}`;
    return (
      `${c.a} was preferred over ${c.b} in ${pct(c.win_rate_a)} of ${decisive} decisive judgments ` +
      `(Wilson 95% CI ${ci(c.ci95)}${p}${boot}); ${c.ties} ties (${pct(c.ties_half.win_rate_a)} with ties as half)` +
      `${kappa}; ${c.majority.pairs} pairs.`
    );
  });
}
