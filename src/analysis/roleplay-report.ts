import { markdownTable } from './report-md.js';
import { ci, num, pct, type Table } from './report-format.js';
import type { RoleplayOutcomes } from './roleplay-outcomes.queries.js';

// The role-play outcomes (issue 52) as the reports show them: the console's analysis and role-play batch pages and
// `simarena analyze --format md`. The win rates against HUMANS:human and the paper table's rows are the report's own.

/** The two tables as the reports show them (Markdown, the console). */
export function roleplayTables(outcomes: RoleplayOutcomes): { title: string; note: string; table: Table }[] {
  return [
    {
      title: 'Partner guesses',
      note: '"Was your partner a person or an AI?", asked of each role-play participant at the end; per condition of the dialogue they were in (its partner a person in HUMANS, the model in HUMAN_AGENT). Wilson 95% intervals.',
      table: {
        headers: ['condition', 'partner', 'answers', 'judged a person', 'share', '95% interval (Wilson)'],
        rows: outcomes.partner_guesses.map((g) => [g.condition, g.partner === 'person' ? 'a person' : 'the model', g.answers, g.judged_person, pct(g.share), ci(g.ci95)]),
      },
    },
    {
      title: 'Goal completion: self-report and Sotopia-Eval',
      note: 'Self-report: "How far did you get with your goal?" (1 to 10). Sotopia-Eval: the goal score (0 to 10) the latest episode evaluation gave the same character in the same dialogue; paired columns are over participants with both.',
      table: {
        headers: ['condition', 'self-reports', 'self-report mean', 'paired', 'self-report mean (paired)', 'Sotopia-Eval goal mean (paired)', 'mean difference', 'Pearson r'],
        rows: outcomes.goals.map((g) => [g.condition, g.self_reports, num(g.self_mean, 2), g.paired, num(g.paired_self_mean, 2), num(g.sotopia_mean, 2), num(g.mean_difference, 2), num(g.pearson_r, 3)]),
      },
    },
  ];
}

/** The outcomes as Markdown sections, after the report's own. */
export function roleplayMarkdown(outcomes: RoleplayOutcomes): string {
  const lines = ['## Role-play participants', '', `${outcomes.answers} answers from the participants of ${outcomes.dialogues} collected dialogue(s).`, ''];
  for (const { title, note, table } of roleplayTables(outcomes)) lines.push(`### ${title}`, '', note, '', table.rows.length === 0 ? '(none)' : markdownTable(table), '');
  return lines.join('\n');
}
