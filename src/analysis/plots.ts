import type * as Vega from 'vega';
import type * as VegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';
import type { AnalysisReport } from './analysis-report.js';
import { raterCount } from './page-report.js';

// Plots are drawn on the server as SVG (vega-lite compiled to vega, rendered by a headless View): no canvas, no
// browser, no external assets, so the same SVG goes into the console, the API and the standalone HTML report.

export const PLOT_NAMES = ['forest', 'win-rate', 'position-bias', 'rater-quality', 'verbosity'] as const;
export type PlotName = (typeof PLOT_NAMES)[number];

export const PLOT_TITLES: Record<PlotName, string> = {
  forest: 'Win rate of a per comparison (Wilson 95% and cluster-bootstrap 95% intervals)',
  'win-rate': 'Win rate of a per comparison and scenario category (Wilson 95%)',
  'position-bias': 'Rate of choosing the left dialogue per comparison (Wilson 95%)',
  'rater-quality': 'Raters: agreement with the leave-one-out majority against median time',
  verbosity: 'Words per spoken turn per condition',
};

// Each comparison is named in full with its number of judgments, so a plot read alone still says what and how much.
const label = (c: { a: string; b: string; n: number }) => `${c.a} vs ${c.b} (n = ${c.n})`;
// Wide enough for full condition names beside the axis at the console's width (72rem) and in the HTML report.
const WIDTH = 560;

/**
 * Why a plot has nothing to draw for this report, or null when it has something. The console shows the reason in
 * place of the plot, and the SVG itself carries it, so an empty plot is never just a blank frame.
 */
export function emptyPlotReason(report: AnalysisReport, name: PlotName): string | null {
  const decisive = report.comparisons.some((c) => c.win_rate_a !== null);
  switch (name) {
    case 'forest':
    case 'win-rate':
      return decisive ? null : 'No decisive judgment yet (after exclusions and ties), so there is no win rate to place on the scale.';
    case 'position-bias':
      return report.comparisons.some((c) => c.position_bias.left_rate !== null) ? null : 'No decisive judgment with a recorded screen side yet, so there is no left-choice rate.';
    case 'rater-quality': {
      if (raterCount(report) === 0) return 'No raters yet (after exclusions).';
      const withAgreement = report.raters.filter((r) => r.loo_agreement !== null);
      if (withAgreement.length === 0)
        return `None of the ${raterCount(report)} rater${raterCount(report) === 1 ? '' : 's'} has judged a pair on which the other raters agree, so no agreement with the leave-one-out majority exists yet: it needs pairs judged by at least two other raters (or two with the same answer).`;
      return withAgreement.some((r) => r.median_seconds !== null) ? null : 'No judgment times are recorded for the raters with an agreement, so there is nothing to place on the time axis.';
    }
    case 'verbosity':
      return verbosityValues(report).some((v) => v.words !== null) ? null : 'No spoken turns in the dialogues of this batch yet, so there are no words per turn to compare.';
  }
}

function verbosityValues(report: AnalysisReport): { condition: string; words: number | null }[] {
  const fromDialogues = report.dialogue_metrics.map((d) => ({ condition: `${d.condition} (${d.dialogues} dialogue${d.dialogues === 1 ? '' : 's'})`, words: d.words_per_turn }));
  return fromDialogues.length > 0
    ? fromDialogues
    : report.comparisons.flatMap((c) => [
        { condition: c.a, words: c.length_control.mean_words_per_turn_a },
        { condition: c.b, words: c.length_control.mean_words_per_turn_b },
      ]);
}

// Each SVG carries its own title and full condition names, so a downloaded plot still says what it shows.
const baseSpec = (name: PlotName) =>
  ({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    background: 'white',
    title: { text: PLOT_TITLES[name], anchor: 'start', fontSize: 13 },
    config: { font: 'sans-serif', axis: { labelFontSize: 11, titleFontSize: 12 }, header: { labelLimit: 0 } },
  }) as const;
// The 50% reference line: a layer of its own with no y encoding, so it spans the plot vertically.
// aria: false: the line is decoration (the axis title names it), so it must not appear as an unlabelled image.
const rule50 = { data: { values: [{}] }, mark: { type: 'rule', strokeDash: [4, 4], color: '#888', aria: false }, encoding: { x: { datum: 0.5 } } } as const;
const rateAxis = { type: 'quantitative', scale: { domain: [0, 1] }, axis: { format: '.0%' }, title: 'win rate of a (decisive judgments; dashed line: 50%)' } as const;

function forestSpec(report: AnalysisReport): TopLevelSpec {
  const values = report.comparisons.flatMap((c) => [
    { comparison: label(c), interval: 'Wilson', rate: c.win_rate_a, low: c.ci95?.[0] ?? null, high: c.ci95?.[1] ?? null },
    { comparison: label(c), interval: 'cluster bootstrap', rate: c.win_rate_a, low: c.bootstrap.ci95?.[0] ?? null, high: c.bootstrap.ci95?.[1] ?? null },
  ]);
  return {
    ...baseSpec('forest'),
    width: WIDTH,
    data: { values },
    layer: [
      {
        encoding: {
          y: { field: 'comparison', type: 'nominal', title: null, axis: { labelLimit: 0 } },
          yOffset: { field: 'interval' },
          color: { field: 'interval', type: 'nominal', title: '95% interval', legend: { orient: 'bottom' } },
        },
        layer: [
          { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x: { field: 'low', ...rateAxis }, x2: { field: 'high' } } },
          { mark: { type: 'point', filled: true, size: 60 }, encoding: { x: { field: 'rate', ...rateAxis } } },
        ],
      },
      rule50,
    ],
  } as unknown as TopLevelSpec;
}

function winRateSpec(report: AnalysisReport): TopLevelSpec {
  const values = report.comparisons.flatMap((c) => [
    { comparison: label(c), category: 'all', rate: c.win_rate_a, low: c.ci95?.[0] ?? null, high: c.ci95?.[1] ?? null },
    ...c.by_category.map((k) => ({ comparison: label(c), category: k.key, rate: k.win_rate_a, low: k.ci95?.[0] ?? null, high: k.ci95?.[1] ?? null })),
  ]);
  return {
    ...baseSpec('win-rate'),
    width: WIDTH - 60,
    data: { values },
    // Comparison names above each panel (horizontal), not rotated beside it where long names overlap.
    facet: { row: { field: 'comparison', type: 'nominal', title: null, header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelFontWeight: 'bold', labelFontSize: 12, labelLimit: 0 } } },
    spec: {
      width: WIDTH - 60,
      layer: [
        {
          encoding: { y: { field: 'category', type: 'nominal', title: 'scenario category', sort: null } },
          layer: [
            { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x: { field: 'low', ...rateAxis }, x2: { field: 'high' } } },
            { mark: { type: 'point', filled: true, size: 60 }, encoding: { x: { field: 'rate', ...rateAxis } } },
          ],
        },
        { mark: { type: 'rule', strokeDash: [4, 4], color: '#888', aria: false }, encoding: { x: { datum: 0.5 } } },
      ],
    },
  } as unknown as TopLevelSpec;
}

function positionBiasSpec(report: AnalysisReport): TopLevelSpec {
  const values = report.comparisons.map((c) => ({
    comparison: label(c),
    rate: c.position_bias.left_rate,
    low: c.position_bias.ci95?.[0] ?? null,
    high: c.position_bias.ci95?.[1] ?? null,
  }));
  return {
    ...baseSpec('position-bias'),
    width: WIDTH,
    data: { values },
    layer: [
      {
        encoding: { y: { field: 'comparison', type: 'nominal', title: null, axis: { labelLimit: 0 } } },
        layer: [
          {
            mark: { type: 'bar', color: '#9ecae1' },
            encoding: {
              x: { field: 'rate', type: 'quantitative', scale: { domain: [0, 1] }, axis: { format: '.0%' }, title: 'share of decisive judgments choosing the left dialogue (dashed line: no bias)' },
            },
          },
          { mark: { type: 'rule', strokeWidth: 2 }, encoding: { x: { field: 'low', type: 'quantitative' }, x2: { field: 'high' } } },
        ],
      },
      rule50,
    ],
  } as unknown as TopLevelSpec;
}

function raterQualitySpec(report: AnalysisReport): TopLevelSpec {
  const values = report.raters
    .filter((r) => r.loo_agreement !== null)
    .slice(0, 5000)
    .map((r) => ({ rater: r.rater, agreement: r.loo_agreement, seconds: r.median_seconds, judgments: r.judgments }));
  const subtitle = `${values.length} of ${raterCount(report)} raters have an agreement with the majority; dot size: judgments`;
  return {
    ...baseSpec('rater-quality'),
    title: { ...baseSpec('rater-quality').title, subtitle },
    width: WIDTH,
    height: 320,
    data: { values },
    mark: { type: 'point', filled: true, opacity: 0.6 },
    encoding: {
      x: { field: 'seconds', type: 'quantitative', title: 'median seconds per judgment' },
      y: { field: 'agreement', type: 'quantitative', scale: { domain: [0, 1] }, axis: { format: '.0%' }, title: 'agreement with leave-one-out majority' },
      size: { field: 'judgments', type: 'quantitative', title: 'judgments' },
    },
  } as unknown as TopLevelSpec;
}

function verbositySpec(report: AnalysisReport): TopLevelSpec {
  const values = verbosityValues(report);
  return {
    ...baseSpec('verbosity'),
    width: WIDTH,
    data: { values },
    mark: { type: 'bar', color: '#74a9cf' },
    encoding: {
      y: { field: 'condition', type: 'nominal', title: null, axis: { labelLimit: 0 } },
      x: { field: 'words', type: 'quantitative', title: 'mean words per spoken turn', aggregate: 'mean' },
    },
  } as unknown as TopLevelSpec;
}

/** The vega-lite spec of each plot. */
const PLOT_SPECS: Record<PlotName, (report: AnalysisReport) => TopLevelSpec> = {
  'forest': forestSpec,
  'win-rate': winRateSpec,
  'position-bias': positionBiasSpec,
  'rater-quality': raterQualitySpec,
  'verbosity': verbositySpec,
};

function specFor(report: AnalysisReport, name: PlotName): TopLevelSpec {
  return PLOT_SPECS[name](report);
}

function wrapWords(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

/** A plot with nothing to draw: its title and, in place of marks, the reason. */
function emptySpec(name: PlotName, reason: string): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    background: 'white',
    title: { text: PLOT_TITLES[name], anchor: 'start', fontSize: 13 },
    config: { font: 'sans-serif', view: { stroke: null } },
    width: WIDTH,
    height: 70,
    data: { values: [{ reason: wrapWords(`Nothing to draw: ${reason}`, 90) }] },
    mark: { type: 'text', align: 'left', baseline: 'top', fontSize: 12, lineBreak: '\n' },
    encoding: { text: { field: 'reason' }, x: { value: 0 }, y: { value: 4 } },
  } as unknown as TopLevelSpec;
}

export function isPlotName(name: string): name is PlotName {
  return (PLOT_NAMES as readonly string[]).includes(name);
}

// vega and vega-lite are loaded on the first plot drawn, not at start: the server draws one only for a result stored
// without its plots (the analysis worker draws them), and the two hold about 15 MB of heap that every major garbage
// collection of the server marked again under rater load (issue 12).
let plotLibraries: Promise<[typeof Vega, typeof VegaLite]> | undefined;
const loadPlotLibraries = () => (plotLibraries ??= Promise.all([import('vega'), import('vega-lite')]));

/** One plot of the report as a standalone SVG document. */
export async function renderPlot(report: AnalysisReport, name: PlotName): Promise<string> {
  const [vega, { compile }] = await loadPlotLibraries();
  const empty = emptyPlotReason(report, name);
  const compiled = compile(empty === null ? specFor(report, name) : emptySpec(name, empty)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export async function renderAllPlots(report: AnalysisReport): Promise<Record<PlotName, string>> {
  const out = {} as Record<PlotName, string>;
  for (const name of PLOT_NAMES) out[name] = await renderPlot(report, name);
  return out;
}
