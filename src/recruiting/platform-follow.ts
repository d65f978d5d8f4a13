import { type BatchView, getBatch } from '../batches/batch.commands.js';
import type { Db } from '../db/connection.js';
import { UserFacingError } from '../errors/user-facing-error.js';
import type { Config } from '../config.js';
import type { PlatformDeps } from './platform-deps.js';
import { platformName } from './platform-error.js';
import { type FollowTarget, getPlatformFollow, listFollowedBatches, type PlatformFollowRow, recordPlatformFollow } from './platform-follows.queries.js';
import { findProlificStudyId, type Platform } from './platform-operations.queries.js';
import { expireMturkHits } from './mturk-workflows.js';
import { followProlificStudy } from './prolific-workflows.js';

// The study follows its batch (issue 50, item 11). A batch stops taking raters when it closes (by hand, or by itself:
// every comparison of a sequential batch stopped and the last hold lapsed), is paused, or has every pair full; its
// Prolific study would still send participants, who are then told the study is closed or full and asked to return it.
// The server checks every few seconds (PLATFORM_FOLLOW_SECONDS) and brings each platform in step: the Prolific study
// paused, stopped, or started again when the server itself paused it and the batch has room again; the MTurk HITs
// expired. Each request goes through the ledger (recorded before it is sent, reconciled before anything is sent again,
// under the batch's platform lock); what was reached is kept in platform_follows, so a platform in step is not asked
// again and a restart loses nothing. Without the platform's token in the server's environment nothing can be sent:
// the batch page then says loudly that the study must be paused by hand, with its link.

export type Follow = { platform: Platform; target: FollowTarget; why: string };

/** What the batch asks of its Prolific study now; null for a draft. */
export function prolificTargetOf(batch: Pick<BatchView, 'state' | 'counts' | 'settings'>): Follow | null {
  if (batch.state === 'closed') return { platform: 'prolific', target: 'stopped', why: 'the batch is closed' };
  if (batch.state === 'paused') return { platform: 'prolific', target: 'paused', why: 'the batch is paused' };
  if (batch.state !== 'open') return null;
  if (batch.counts.pairs > 0 && batch.counts.completedPairs >= batch.counts.pairs) {
    const k = batch.settings.judgmentsPerPair;
    return { platform: 'prolific', target: 'paused', why: `every pair has its ${k} judgment${k === 1 ? '' : 's'}` };
  }
  return { platform: 'prolific', target: 'active', why: 'the batch is open' };
}

/** What the batch asks of its MTurk HITs: expired once it is closed or paused (MTurk cannot pause a HIT). */
export function mturkTargetOf(batch: Pick<BatchView, 'state'>): Follow | null {
  if (batch.state === 'closed') return { platform: 'mturk', target: 'expired', why: 'the batch is closed' };
  if (batch.state === 'paused') return { platform: 'mturk', target: 'expired', why: 'the batch is paused' };
  return null;
}

function targetOf(batch: BatchView, platform: Platform): Follow | null {
  return platform === 'prolific' ? prolificTargetOf(batch) : mturkTargetOf(batch);
}

/**
 * Whether the platform must be asked anything for `follow`: not when the last check reached it, and not to start a
 * study the server did not pause itself (one Prolific paused, or a person, is left as it is).
 */
function needsAction(follow: Follow, row: PlatformFollowRow | undefined): boolean {
  if (row && row.target === follow.target && row.reached_at) return false;
  if (follow.target === 'active') return row?.target === 'paused' && row.reached_at !== null && row.acted === 1;
  return true;
}

/** A refusal is tried again after this long, not on every check. */
const RETRY_AFTER_MS = 60_000;

async function bringInStep(deps: PlatformDeps, batchId: number, follow: Follow): Promise<{ reached: true; acted: boolean } | { reached: false; problem: string }> {
  try {
    if (follow.platform === 'mturk') {
      await expireMturkHits(deps, batchId);
      return { reached: true, acted: true };
    }
    const outcome = await followProlificStudy(deps, batchId, follow.target as 'active' | 'paused' | 'stopped', follow.why);
    return outcome.reached ? { reached: true, acted: outcome.sent } : { reached: false, problem: `Prolific shows the study ${outcome.status}; the server tries again shortly.` };
  } catch (error) {
    if (!(error instanceof UserFacingError)) throw error;
    return { reached: false, problem: error.message };
  }
}

export type FollowResult = { batchId: number; platform: Platform; target: FollowTarget; reached: boolean; problem: string | null };

/** Brings one batch's platform in step, if it is not; null when there was nothing to do. */
export async function followBatch(deps: PlatformDeps, batchId: number, platform: Platform): Promise<FollowResult | null> {
  const batch = getBatch(deps.db, batchId);
  const follow = batch ? targetOf(batch, platform) : null;
  if (!follow) return null;
  const row = getPlatformFollow(deps.db, batchId, platform);
  if (!needsAction(follow, row)) {
    // An open batch the server never paused: nothing to undo, noted as reached so its next pause is the server's own.
    if (follow.target === 'active' && !(row?.target === 'active' && row.reached_at)) recordPlatformFollow(deps.db, { batchId, ...follow, outcome: { reached: true, acted: false } }, deps.clock());
    return null;
  }
  if (row?.problem && row.target === follow.target && deps.clock().getTime() - Date.parse(row.checked_at) < RETRY_AFTER_MS) return null;
  const outcome = await bringInStep(deps, batchId, follow);
  // A settle holding the batch's lock is not a problem: the next check goes on.
  if (!outcome.reached && /platform_busy|is sending to/.test(outcome.problem)) return null;
  recordPlatformFollow(deps.db, { batchId, ...follow, outcome }, deps.clock());
  return { batchId, platform, target: follow.target, reached: outcome.reached, problem: outcome.reached ? null : outcome.problem };
}

/** One check of every published batch (the server runs it every PLATFORM_FOLLOW_SECONDS): what was done or refused. */
export async function followPlatforms(deps: PlatformDeps): Promise<FollowResult[]> {
  const results: FollowResult[] = [];
  for (const { batch_id: batchId, platform } of listFollowedBatches(deps.db)) {
    const result = await followBatch(deps, batchId, platform);
    if (result) results.push(result);
  }
  return results;
}

/** Where a person pauses or stops a Prolific study by hand. */
export const prolificStudyLink = (studyId: string) => `https://app.prolific.com/researcher/workspaces/studies/${encodeURIComponent(studyId)}`;

export type FollowNotice = { loud: boolean; text: string; link: string | null };

const VERBS: Record<FollowTarget, string> = { active: 'start again', paused: 'pause', stopped: 'stop', expired: 'expire' };

function heldCredentials(config: Config, platform: Platform): boolean {
  return platform === 'prolific' ? config.prolificToken() !== undefined : config.awsCredentials() !== undefined;
}

/**
 * What the batch page says of its platform following it: nothing while in step; loud when the server cannot bring it
 * in step (no token in its environment, a refusal), with what to do by hand and the study's link; quiet while pending.
 */
export function followNotice(db: Db, config: Config, batch: BatchView): FollowNotice | null {
  for (const platform of ['prolific', 'mturk'] as const) {
    const studyId = platform === 'prolific' ? findProlificStudyId(db, batch.id) : null;
    if (platform === 'prolific' && !studyId) continue;
    if (platform === 'mturk' && !listFollowedBatches(db).some((b) => b.batch_id === batch.id && b.platform === 'mturk')) continue;
    const follow = targetOf(batch, platform);
    const row = getPlatformFollow(db, batch.id, platform);
    if (!follow || !needsAction(follow, row)) continue;
    const name = platformName(platform);
    const what = platform === 'prolific' ? `its Prolific study ${studyId ?? ''} may still send participants` : 'its MTurk HITs can still be accepted';
    const byHand = platform === 'prolific' ? `${VERBS[follow.target]} the study by hand on Prolific` : 'expire the HITs by hand (simarena batches close --on-platform, or the requester site)';
    const link = studyId ? prolificStudyLink(studyId) : null;
    if (!heldCredentials(config, platform)) {
      const variable = platform === 'prolific' ? 'PROLIFIC_API_TOKEN' : 'AWS credentials';
      return { loud: true, link, text: `${capitalised(follow.why)}, but the server holds no ${variable}, so ${what}: ${byHand}.` };
    }
    if (row?.problem && row.target === follow.target) return { loud: true, link, text: `${capitalised(follow.why)}, but the server could not ${VERBS[follow.target]} on ${name}: ${row.problem} Until it can, ${byHand}.` };
    return { loud: false, link, text: `${capitalised(follow.why)}: the server will ${VERBS[follow.target]} ${platform === 'prolific' ? 'the Prolific study' : 'the MTurk HITs'} within a minute.` };
  }
  return null;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
