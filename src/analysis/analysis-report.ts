// The shape of an analysis report: what `simarena analyze --format json` prints and GET /api/batches/:id/analysis
// returns. Documented field by field in docs/reference/analysis-report.md.
import type { AgainstHumans } from './against-humans.js';
import type { BootstrapResult, QualifiedInterval } from './bootstrap.js';
import type { CohenPair } from './cohen.js';
import type { ConditionDialogueMetrics } from './dialogue-metrics.js';
import type { LengthControl } from './length-control.js';
import type { PaperSection } from './paper-table.js';
import type { PositionBias } from './position-bias.js';
import type { RealismSection } from './realism-section.js';
import type { SampleSizePlan } from './sample-size.js';

export const REPORT_SCHEMA_VERSION = 1;

export type WinRate = {
  n: number;
  wins_a: number;
  wins_b: number;
  ties: number;
  /** Among decisive judgments (ties excluded). */
  win_rate_a: number | null;
  /** Wilson score 95% interval for win_rate_a. */
  ci95: [number, number] | null;
  /** Exact two-sided binomial (sign) test against 0.5 on decisive judgments. */
  p_value: number | null;
};

export type Breakdown = WinRate & { key: string };

export type Agreement = {
  categories: string[];
  categories_from: 'batch settings' | 'labels in the data';
  n_pairs: number;
  n_judgments: number;
  percent: number | null;
  unanimous_share: number | null;
  majority_share: number | null;
  fleiss_kappa: number | null;
  fleiss_variant: 'fleiss' | 'gwet_unequal' | null;
  krippendorff_alpha: number | null;
  gwet_ac1: number | null;
  cohen_kappa_mean: number | null;
  cohen_pairs: CohenPair[] | null;
  /** Why a coefficient is null, by field name. */
  reasons: Record<string, string>;
  /** Convenience: the first reason, when any coefficient is null. */
  reason?: string;
};

export type ComparisonReport = WinRate & {
  a: string;
  b: string;
  ties_half: { win_rate_a: number | null; ci95: [number, number] | null };
  majority: WinRate & { pairs: number };
  bootstrap: QualifiedInterval & { cluster: 'scenario' | 'item'; raters_resampled: boolean };
  by_category: Breakdown[];
  by_scenario: Breakdown[];
  agreement: Agreement;
  position_bias: PositionBias;
  length_control: LengthControl;
  sample_size: SampleSizePlan;
  dawid_skene: { win_rate_a: number | null; pairs_a: number; pairs_b: number; pairs_tie: number } | null;
};

export type RaterQuality = {
  rater: string;
  judgments: number;
  attention_accuracy: number | null;
  attention_answered: number;
  /** Share of this rater's judgments that match the majority of the other raters on the same pair (pairs with a clear majority only). */
  loo_agreement: number | null;
  loo_pairs: number;
  median_seconds: number | null;
  left_rate: number | null;
  /** Dawid-Skene estimate of the chance this rater gives the true label (position-aware: src/analysis/dawid-skene.ts). */
  ds_accuracy: number | null;
  /** Decisive choices with a known screen side: what "one side" counts. */
  decisive: number;
  /** The rater's flags, each with the rule behind it and whether the batch declares it grounds for exclusion (issue 51). */
  flags: RaterFlag[];
};

export type RaterFlag = { flag: string; rule: string; exclusion_ground: boolean };

export type BradleyTerryReport = {
  anchor: string;
  scale: '1000 + 400*log10(ability / anchor ability)';
  ties: 'half a win each';
  /** `anchor` per condition only when the conditions form several groups never compared with each other. */
  conditions: { condition: string; score: number | null; ci95: [number, number] | null; anchor?: string }[];
  /** `n_clusters` and, below 10 clusters, `warning`: the interval rule (src/analysis/bootstrap.ts). */
  bootstrap: BootstrapResult & { n_clusters?: number; warning?: string };
  /** Present when the conditions form several unconnected groups, each fitted on its own scale. */
  groups?: { anchor: string; conditions: string[]; bootstrap: BootstrapResult & { n_clusters?: number; warning?: string }; reason?: string }[];
  note?: string;
  reason?: string;
};

/** Issue 16: how often the same rater's answers to a later question picked the first question's winner, per later question. */
export type CrossQuestionAgreement = {
  /** The first question's id: every row compares a later question with it. */
  reference: string;
  rows: {
    question_id: string;
    text: string;
    /** Assignments (one rater on one pair) that answered both questions. */
    assignments: number;
    same_winner: number;
    same_winner_share: number | null;
    /** Assignments where neither answer was a tie. */
    both_decisive: number;
    same_among_decisive: number;
    same_among_decisive_share: number | null;
  }[];
};

/** One question's report inside a several-question report: its id and text, then its whole report. */
export type QuestionReport = { id: string; text: string } & AnalysisReport;

export type AnalysisReport = {
  schema_version: number;
  generated_at: string;
  source: { kind: 'batch'; batch_id: number; name: string } | { kind: 'file'; path: string };
  settings: { seed: number; bootstrap: number; target_half_width: number; raters_resampled: boolean; ties_allowed: boolean | null };
  n_judgments: number;
  n_pairs: number;
  n_raters: number;
  exclusions: { raters: { rater: string; reason: string; judgments: number }[]; dropped: { reason: string; judgments: number }[] };
  comparisons: ComparisonReport[];
  by_model: { model: string; comparisons: { a: string; b: string; n: number; win_rate_a: number | null; ci95: [number, number] | null }[] }[];
  agreement: Agreement;
  bradley_terry: BradleyTerryReport | null;
  position_bias: PositionBias;
  raters: RaterQuality[];
  /**
   * Only in the console's page report (src/analysis/page-report.ts, migration 028), whose `raters` is cut to the raters
   * the analysis page shows: how many raters the report has. No report the API, a file or an export carries has it.
   */
  raters_total?: number;
  dialogue_metrics: ConditionDialogueMetrics[];
  /** The paper table (issue 15): per condition, human and LLM-judge win rates, episode evaluation means, deals, leakage; batches only. */
  paper?: PaperSection;
  /** Issue 43, batches only: each comparison without the raters the quality signals flag, next to the full result. */
  sensitivity?: SensitivitySection;
  /**
   * Issue 51, sequential batches only: the result of the design, which the report leads with (the win rates below
   * ignore it and count the judgments after a stop): one entry per comparison, a line each, and the methods paragraph.
   */
  sequential?: SequentialReport;
  /**
   * Issue 52: a preference question's comparisons with HUMANS:human, as each other condition's win rate against it;
   * absent when no comparison has HUMANS:human (and in a which-is-real question's report, whose realism section says it).
   */
  against_humans?: AgainstHumans;
  /** Issue 53, a which-is-real question's report only: detection accuracy, equivalence, error rates and the 2×2. */
  realism?: RealismSection;
  notes: string[];
  /**
   * Issue 16, batches with several questions only (a one-question report has none of these three fields): which question
   * the top-level fields describe (the first, unless one was asked for), every question's report in page order, and
   * how often the answers to the questions agree.
   */
  question?: { id: string; text: string; index: number };
  questions?: QuestionReport[];
  cross_question?: CrossQuestionAgreement | null;
};

/** One side of a sensitivity comparison: the pair-majority result with its rater-clustered interval (sensitivity.ts). */
export type SensitivitySide = {
  pairs: number;
  decisive_pairs: number;
  raters: number;
  win_rate_a: number | null;
  ci95: [number, number] | null;
  design_effect: number | null;
  /** `a preferred`, `b preferred`, `no clear winner`, or `too little to conclude`. */
  conclusion: string;
};

export type SequentialReport = {
  comparisons: {
    comparison: string;
    state: 'running' | 'stopped';
    stop_reason: 'efficacy' | 'futility' | 'final' | null;
    look: number;
    planned_looks: number;
    pairs_used: number;
    max_pairs: number;
    statistic: 'rater-clustered' | 'pair-majorities' | null;
    statistic_reason: string | null;
    raters: number | null;
    design_effect: number | null;
    sequential_p: number | null;
    /** The sequential estimate of a's win rate and its repeated confidence interval. */
    win_rate_a: number | null;
    repeated_ci: [number, number] | null;
    naive_win_rate_a: number | null;
    naive_ci95: [number, number] | null;
    after_stop: { judgments: number; pairs: number; a: number; b: number; ties: number } | null;
  }[];
  lines: string[];
  methods: string;
};

export type SensitivityComparison = {
  a: string;
  b: string;
  full: SensitivitySide;
  /** Without the raters who have a flag the batch declares grounds for exclusion. */
  without: SensitivitySide;
  /** win_rate_a without less with (proportion units); null when either is unknown. */
  change: number | null;
  too_little_left: boolean;
  /** Both sides conclusive and their conclusions differ. */
  flips: boolean;
};

/** Does the result depend on the raters the quality signals flag? (issues 43, 51; computed in sensitivity.ts) */
export type SensitivitySection = {
  unit: 'pair majority';
  interval: string;
  /** The flags the batch declared grounds for exclusion before its first judgment (`exclusionGrounds`). */
  grounds: string[];
  /** Raters (export pseudonyms) with at least one of those flags, left out below. */
  dropped_raters: string[];
  dropped_judgments: number;
  comparisons: SensitivityComparison[];
  /** What changes, comparison by comparison, in a sentence. */
  sentence: string;
};
