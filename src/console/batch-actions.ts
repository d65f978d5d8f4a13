/** What raters see in each lifecycle state, shown beside the buttons. */
export const STATE_EXPLANATIONS: Record<string, string> = {
  draft: 'Draft: the rater link answers "There is no study at this address"; nobody can take part (the preview link works). Settings and pairs can still change.',
  open: 'Open: raters who follow the link take part and are served pairs.',
  paused: 'Paused: new raters are told the study is paused; raters already inside may finish the comparison on screen but are not served new ones: they may wait, or finish with the partial completion code.',
  closed: 'Closed (final): the link says the study is closed. Raters inside may still answer the comparison on screen while its lease runs, and are given the partial completion code. Data stay available for analysis and export.',
};
