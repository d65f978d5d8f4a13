import { publicLinkProblem } from '../web/public-link.js';
import { RecruitingError } from './platform-deps.js';

// Every publish path (Prolific and MTurk, CLI and console) sends its link through here (issue 49): a study whose link
// nobody outside can open is refused before anything is sent; a dry run shows the same words as a warning instead.

/** Refuses `link` for a real publish; in a dry run returns the warning (none for a link participants can open). */
export function checkStudyLink(link: string, platform: 'Prolific' | 'MTurk', dryRun: boolean): string[] {
  const problem = publicLinkProblem(link);
  if (!problem) return [];
  if (!dryRun) throw new RecruitingError(`Nothing was published on ${platform}. ${problem.message}`, 409);
  return [`${problem.message} Publishing would be refused.`];
}
