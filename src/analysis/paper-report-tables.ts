import type { AnalysisReport } from './analysis-report.js';
import type { MeanCi, PaperSection, Rate } from './paper-table.js';
import { ci, num, pct, type Table } from './report-format.js';
import { REAL_REFERENCE } from './two-by-two.js';

const rate = (r: Rate) => (r.rate === null ? '–' : `${pct(r.rate)} ${ci(r.ci95)} (n ${r.n})`);
const mean = (m: MeanCi) => (m.mean === null ? '–' : `${num(m.mean, 2)}${m.ci95 ? ` [${num(m.ci95[0], 2)}, ${num(m.ci95[1], 2)}]` : ''} (n ${m.n})`);

/** The paper table and the LLM judge's agreement with the humans, for the Markdown and HTML reports. */
export function paperTables(report: AnalysisReport): { title: string; note?: string; table: Table }[] {
  return report.paper ? paperSectionTables(report.paper) : [];
}

/** The same tables for a paper section on its own (a run's, from simarena evaluations metrics). */
export function paperSectionTables(paper: PaperSection): { title: string; note?: string; table: Table }[] {
  if (paper.rows.length === 0) return [];
  // The columns of the people's reference (issues 52, 53) only when the batch has them, so other tables stay as they were.
  const vsHumans = paper.rows.some((r) => r.win_rate_vs_humans.n > 0);
  const judgedReal = paper.rows.some((r) => r.judged_real.n > 0);
  const out: { title: string; note?: string; table: Table }[] = [
    {
      title: 'Paper table: per condition',
      note: paper.notes.join(' '),
      table: {
        headers: [
          'condition', 'scope', 'dialogues', 'human win rate', ...(vsHumans ? [`vs ${REAL_REFERENCE}`] : []), ...(judgedReal ? ['judged real'] : []),
          'LLM-judge win rate', 'goal (model)', 'believability (model)', 'deal rate (model)',
          'mutual friend position', 'first mention of other\u2019s fact', 'premature mention', 'words per turn',
        ],
        rows: paper.rows.map((r) => [
          r.condition, r.scope, r.dialogues, rate(r.human_win_rate), ...(vsHumans ? [rate(r.win_rate_vs_humans)] : []), ...(judgedReal ? [rate(r.judged_real)] : []),
          rate(r.llm_judge_win_rate), mean(r.goal), mean(r.believability), rate(r.deal_rate),
          num(r.mutual_friend_position, 2), num(r.first_mention_position, 2), pct(r.premature_share), num(r.words_per_turn, 1),
        ]),
      },
    },
  ];
  if (paper.llm_judge) {
    const j = paper.llm_judge;
    out.push({
      title: 'LLM judge beside the humans',
      note: `${j.name}: judge ${j.judge_model}, prompts ${j.prompt_version}. ${j.agreement.convention} Position bias: share of decisive answers choosing the interaction shown first (0.5 = none).`,
      table: {
        headers: ['measure', 'n', 'value', 'Cohen kappa'],
        rows: [
          ['agreement with human majority, without ties', j.agreement.without_ties.n, pct(j.agreement.without_ties.percent), num(j.agreement.without_ties.cohen_kappa, 2)],
          ['agreement with human majority, with ties', j.agreement.with_ties.n, pct(j.agreement.with_ties.percent), num(j.agreement.with_ties.cohen_kappa, 2)],
          ['first-shown rate (position bias)', j.position_bias.n, `${pct(j.position_bias.first_shown_rate)} ${ci(j.position_bias.ci95)}`, '–'],
          ['same verdict in both orders', j.position_bias.pairs_both_orders, pct(j.position_bias.consistency), '–'],
        ],
      },
    });
  }
  if (paper.evaluations.length > 0)
    out.push({
      title: 'Episode evaluations used',
      note: 'Per dialogue, the latest evaluation that scored it.',
      table: { headers: ['evaluation', 'judge model', 'prompts'], rows: paper.evaluations.map((e) => [e.name, e.judge_model, e.prompt_version]) },
    });
  return out;
}
