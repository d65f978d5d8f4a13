import type { AnalysisReport } from './analysis-report.js';
import type { RealismSection } from './realism-section.js';
import { ci, num, pct, pValue, type Table } from './report-format.js';
import type { CellRate, Effect, TwoByTwo, TwoByTwoModel } from './two-by-two.js';

// The realism rows of the Markdown and HTML reports (issue 53) and the win rates against HUMANS:human (issue 52):
// plain tables, shared by both renderers through report-tables.ts.

type Section = { title: string; note?: string; table: Table };

// A fit on few answers can give a non-finite estimate, which the stored (JSON) report holds as null: shown as '–'.
const finite = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);
const logit = (x: number | null) => (!finite(x) ? '–' : x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
const interval = (c: [number | null, number | null] | null) => (c ? `[${logit(c[0])}, ${logit(c[1])}]` : '–');
const points = (x: number | null) => (finite(x) ? (x * 100).toFixed(1) : '–');

/** Each condition's naturalness win rate against HUMANS:human (a preference question's report). */
export function againstHumansTable(report: AnalysisReport): Section | null {
  const humans = report.against_humans;
  if (!humans) return null;
  return {
    title: `Win rates against ${humans.reference}`,
    note: `Each condition in its comparison with ${humans.reference} (people's own conversations of the same scenario): its share of the decisive judgments, Wilson 95% interval, exact sign test, and the comparison's cluster bootstrap. Above 50%: judged more natural than the people.`,
    table: {
      headers: ['condition', 'n', 'wins', 'losses', 'ties', 'win rate', 'Wilson 95%', 'p', 'bootstrap 95%'],
      rows: humans.rows.map((r) => [r.condition, r.n, r.wins, r.losses, r.ties, pct(r.win_rate), ci(r.ci95), pValue(r.p_value), ci(r.bootstrap_ci95)]),
    },
  };
}

function detectionTable(r: RealismSection): Section {
  return {
    title: 'Which is real: detection per condition',
    note: r.notes.join(' '),
    table: {
      headers: ['condition', 'answers', 'raters', 'scenarios', 'accuracy', '95% (clustered)', 'error rate', '95%', 'TOST p', '90% interval', 'verdict'],
      rows: [
        ...r.conditions.map((c) => [
          c.condition, c.n, c.raters, c.scenarios, pct(c.accuracy), ci(c.ci95), pct(c.error_rate), ci(c.error_ci95),
          c.equivalence ? pValue(c.equivalence.p) : '–', c.equivalence ? ci(c.equivalence.ci) : '–', c.verdict,
        ]),
        ['all conditions', r.overall.n, '–', '–', pct(r.overall.accuracy), ci(r.overall.ci95), '–', '–', '–', '–', '–'],
      ],
    },
  };
}

function pairwiseTable(r: RealismSection): Section | null {
  if (r.pairwise.length === 0) return null;
  return {
    title: 'Which is real: error rates compared',
    note: "Difference of error rates (a − b) from one linear probability model with a dummy per condition, two-way clustered by rater and scenario; Holm's correction over the pairs.",
    table: {
      headers: ['a', 'b', 'difference', '95%', 'p', 'p (Holm)'],
      rows: r.pairwise.map((p) => [p.a, p.b, `${points(p.error_difference)} points`, `[${points(p.ci95[0])}, ${points(p.ci95[1])}]`, pValue(p.p), pValue(p.p_holm)]),
    },
  };
}

function fixedEffectsTable(r: RealismSection): Section | null {
  if (r.conditions.length < 2) return null;
  const fe = r.fixed_effects;
  if ('reason' in fe) return { title: 'Which is real: rater and scenario effects', note: `Not fitted: ${fe.reason}.`, table: { headers: ['a', 'b'], rows: [] } };
  return {
    title: 'Which is real: rater and scenario effects',
    note: `Logistic regression of "taken for real" on the condition with a fixed effect per rater and per scenario (${fe.rows} answers, ${fe.raters} raters, ${fe.scenarios} scenarios, ${fe.parameters} parameters; ${fe.dropped_rows} answers of raters or scenarios whose answers were all the same left out). Error-rate log odds ratio of a over b, model-based standard error, Holm over the pairs; with few answers per rater fixed effects overstate the contrasts, so read it beside the clustered comparison.`,
    table: {
      headers: ['a', 'b', 'log odds ratio', 'se', 'p', 'p (Holm)'],
      rows: fe.pairwise.map((p) => [p.a, p.b, logit(p.log_odds_ratio), num(p.se, 3), pValue(p.p), pValue(p.p_holm)]),
    },
  };
}

function calibrationTable(r: RealismSection): Section | null {
  const c = r.calibration;
  if (!c) return null;
  const slope = c.slope
    ? `Accuracy rises with confidence when the slope is above 0: ${logit(c.slope.estimate)} per point on the logit scale, 95% ${interval(c.slope.ci95)}, p ${pValue(c.slope.p)} (two-way clustered).`
    : `No slope: ${c.reason ?? 'undefined'}.`;
  return {
    title: 'Which is real: confidence',
    note: `${c.n} answers gave a confidence (1 = a guess, 5 = certain). Mean confidence when right ${num(c.mean_confidence_correct, 2)}, when wrong ${num(c.mean_confidence_wrong, 2)}. ${slope}`,
    table: { headers: ['confidence', 'answers', 'chose the real one', 'accuracy', 'Wilson 95%'], rows: c.levels.map((l) => [l.confidence, l.n, l.correct, pct(l.accuracy), ci(l.ci95)]) },
  };
}

const cell = (c: CellRate) => (c.by_construction ? '50% (itself)' : c.rate === null ? '–' : `${pct(c.rate)} ${ci(c.ci95)} (n ${c.n})`);
const effectText = (m: TwoByTwoModel, name: 'writer' | 'knowledge' | 'interaction') => {
  if ('reason' in m) return '–';
  const e: Effect = m.effects[name];
  return `${logit(e.estimate)} ${interval(e.ci95)}, p ${pValue(e.p)}`;
};

function twoByTwoSections(t: TwoByTwo): Section[] {
  const reasons = (['natural', 'detection_error'] as const).flatMap((k) => ('reason' in t[k] ? [`${k === 'natural' ? 'Naturalness' : 'Detection error'}: ${(t[k] as { reason: string }).reason}.`] : []));
  return [
    {
      title: `2×2 of writer and knowledge (${t.model}): cells`,
      note: `Each cell set against ${t.reference} on the same scenario: its naturalness win rate, and its detection error rate (taken for the real one); two-way clustered 95% intervals. ${t.reference} against itself is 50% by construction.`,
      table: {
        headers: ['condition', 'writer', 'knowledge', `naturalness vs ${t.reference}`, 'detection error rate'],
        rows: t.cells.map((c) => [c.condition, c.writer, c.knowledge, cell(c.natural), cell(c.detection_error)]),
      },
    },
    {
      title: `2×2 of writer and knowledge (${t.model}): effects`,
      note: `Logistic regression of "the synthetic one chosen" on writer (model vs person), knowledge (omniscient vs own side) and their product, no intercept (${t.reference} is the reference, 0 on the logit scale); main effects averaged over the other factor; log odds with two-way clustered 95% intervals. The paper's claim is a positive knowledge effect on naturalness with a negative one on detection error.${reasons.map((r) => ` ${r}`).join('')}`,
      table: {
        headers: ['effect (logit)', 'naturalness', 'detection error'],
        rows: [
          ['writer: model − person', effectText(t.natural, 'writer'), effectText(t.detection_error, 'writer')],
          ['knowledge: omniscient − own side', effectText(t.natural, 'knowledge'), effectText(t.detection_error, 'knowledge')],
          ['interaction', effectText(t.natural, 'interaction'), effectText(t.detection_error, 'interaction')],
        ],
      },
    },
  ];
}

/** A which-is-real question's tables: detection, comparisons, the logistic model, confidence and the 2×2. */
export function realismTables(report: AnalysisReport): Section[] {
  const r = report.realism;
  if (!r) return [];
  return [detectionTable(r), pairwiseTable(r), fixedEffectsTable(r), calibrationTable(r), ...r.two_by_two.flatMap(twoByTwoSections)].filter((s): s is Section => s !== null);
}

/** One sentence per synthetic condition, for the report's summary. */
export function realismSentences(report: AnalysisReport): string[] {
  return report.realism?.conditions.map((c) => c.sentence) ?? [];
}
