import type { Response } from 'express';
import type { BatchRow } from '../batches/batch.queries.js';
import { type BatchSettings, roleplayOf, writeOf } from '../batches/batch.schema.js';
import { roleplaySessionTime } from '../batches/minimum-time.js';
import { getDialogue } from '../generation/dialogue.queries.js';
import { mturkSubmitUrl, MTURK_PREVIEW_ASSIGNMENT, prolificCompletionUrl } from '../rating/providers.js';
import { batchOf, type RaterPages, returnAdvice } from '../rating/rater-pages.js';
import { raterToken } from '../rating/rater-token.js';
import { getRaterByPublicId, type RaterRow } from '../rating/rating.queries.js';
import { csrfTokenFor } from '../web/signing.js';
import { seeOther } from '../web/see-other.js';
import { endMessage } from './live-events.js';
import type { LiveEntryDecision } from './live-entry.js';
import { getLiveDialogue, getPlayer, listTurnsAfter, type PlayerOutcome } from './live.queries.js';
import { TURN_TEXT_MAX } from './live.schema.js';
import { buildPlayerView, turnsForPlayer } from './player-view.js';

// The role-play pages' view models (views/live/*.ejs). Built from the player's own rows: nothing on them names the
// mode, the model or whether the partner is a person, and of the partner only what the relationship shows.

const PRIVACY =
  'We store what you write in the conversation, the times of your turns, your answers to the questions at the end, the identifier your ' +
  'recruitment platform gives us, your browser type and a scrambled code made from your internet address (to stop one computer from ' +
  'taking many places; the address itself is not stored). We do not ask for your name or contact details, and the chat does not let ' +
  'anyone share them. Conversations are analysed and shared under a pseudonym only, and may be shown to other study participants who rate them.';

/** What a writing batch's consent says is stored (issue 53): as PRIVACY, without a chat. */
const WRITE_PRIVACY =
  'We store the conversation you write, when you wrote each turn, the identifier your recruitment platform gives us, your browser type ' +
  'and a scrambled code made from your internet address (to stop one computer from taking many places; the address itself is not stored). ' +
  'We do not ask for your name or contact details: please do not write any. Conversations are analysed and shared under a pseudonym only, ' +
  'and may be shown to other study participants who rate them.';

/** The pages' prefix: a role-play batch's are under /live, a writing batch's (issue 53) under /write. */
export type LivePrefix = 'live' | 'write';
export type LiveStep = `${LivePrefix}/instructions` | LivePrefix | `${LivePrefix}/done`;

function stepOf(rater: RaterRow, prefix: LivePrefix): LiveStep {
  if (rater.status === 'instructions') return `${prefix}/instructions`;
  return rater.status === 'rating' ? prefix : `${prefix}/done`;
}

/** The facts every role-play page states: time (the wait included), pay, the partner, turns, privacy, withdrawing. */
function liveFacts(settings: BatchSettings) {
  const roleplay = roleplayOf(settings);
  return {
    // Never less than a session can take (the launch checklist judges the pay at the same time).
    minutes: Math.max(settings.estimatedMinutes, roleplay ? roleplaySessionTime(roleplay).minutes : 0),
    waitMinutes: Math.ceil((roleplay?.partner.waitSeconds ?? 0) / 60),
    pay: settings.pay,
    provider: settings.provider.kind,
    turns: roleplay?.turns ?? { max: 20, min: 6, turnSeconds: 90 },
    privacy: PRIVACY,
  };
}

/** The facts a writing batch's pages state (issue 53): no partner and no wait, the turns asked for. */
function writeFacts(settings: BatchSettings) {
  return { minutes: settings.estimatedMinutes, pay: settings.pay, provider: settings.provider.kind, writing: writeOf(settings)?.writing ?? { minTurns: 8, maxTurns: 20 }, privacy: WRITE_PRIVACY };
}

export function livePages(pages: RaterPages, prefix: LivePrefix = 'live') {
  const path = (b: BatchRow, step: string) => `${pages.base(b)}/${step}`;
  const placeOf = (b: BatchRow, rater: RaterRow) => pages.withToken(path(b, stepOf(rater, prefix)), rater);
  const factsOf = prefix === 'live' ? liveFacts : writeFacts;
  const placeAfterChange = (b: BatchRow, rater: RaterRow) => placeOf(b, getRaterByPublicId(pages.deps.db, rater.public_id) ?? rater);
  const locals = (res: Response, rater: RaterRow | null, title: string) => ({
    ...pages.pageLocals(res, rater, title),
    withdrawUrl: rater && rater.status === 'rating' ? pages.withToken(path(batchOf(res).batch, `${prefix}/withdraw`), rater) : null,
  });
  return {
    pages,
    prefix,
    path,
    placeOf,
    placeAfterChange,
    locals,
    /** Sends a rater who is not at this step to theirs; true when it did. */
    redirectUnlessAt(res: Response, b: BatchRow, rater: RaterRow, step: LiveStep): boolean {
      if (stepOf(rater, prefix) === step) return false;
      seeOther(res, placeOf(b, rater));
      return true;
    },
    renderConsent(res: Response, et: string): void {
      const { batch: b, settings } = batchOf(res);
      res.render(`${prefix}/consent`, {
        ...locals(res, null, 'Consent'),
        et,
        csrfToken: csrfTokenFor(pages.deps.sessionSecret, `entry:${et}`),
        action: path(b, `${prefix}/consent`),
        consentHtml: pages.markdown(settings.consent),
        facts: factsOf(settings),
      });
    },
    renderInstructions(res: Response, rater: RaterRow): void {
      const { batch: b, settings } = batchOf(res);
      res.render(`${prefix}/instructions`, { ...locals(res, rater, 'Instructions'), action: path(b, `${prefix}/instructions`), instructionsHtml: pages.markdown(settings.instructions), facts: factsOf(settings) });
    },
    renderWithdraw(res: Response, rater: RaterRow): void {
      const { batch: b } = batchOf(res);
      res.render('rater/withdraw', { ...locals(res, rater, 'Withdraw from this study'), action: path(b, `${prefix}/withdraw`), backUrl: placeOf(b, rater) });
    },
    refuse(res: Response, decision: Exclude<LiveEntryDecision, { kind: 'open' | 'returning' }>): void {
      if (decision.kind === 'limited') {
        res.set('Retry-After', String(decision.retryAfterMinutes * 60));
        pages.notice(res, 429, null, 'Please try again later', decision.message);
      } else if (decision.kind === 'blocked') pages.notice(res, 403, null, 'You have already taken part', decision.message);
      else if (decision.kind === 'refused') pages.notice(res, 403, null, 'This session belongs to someone else', decision.message);
      else pages.notice(res, 200, null, 'You have already done this study', `You have already taken part in this study in an earlier HIT. Thank you! ${returnAdvice('mturk')}`);
    },
  };
}

export type LivePages = ReturnType<typeof livePages>;

/** The play page's addresses: the stream, the forms, and where the page goes next. */
function playUrls(lp: LivePages, b: BatchRow, rater: RaterRow, afterIdx: number) {
  const rt = encodeURIComponent(raterToken(lp.pages.deps.sessionSecret, rater.public_id));
  return {
    events: `${lp.path(b, 'live/events')}?rt=${rt}&after=${afterIdx}`,
    turn: lp.path(b, 'live/turn'),
    report: lp.path(b, 'live/report'),
    answers: lp.path(b, 'live/answers'),
    play: lp.pages.withToken(lp.path(b, 'live'), rater),
    done: lp.pages.withToken(lp.path(b, 'live/done'), rater),
  };
}

/** The one page of a player in the study: the lobby, the dialogue, or the questions after it. */
export function playPage(lp: LivePages, res: Response, rater: RaterRow): void {
  const { db, clock } = lp.pages.deps;
  const { batch: b, settings } = batchOf(res);
  const roleplay = roleplayOf(settings);
  const player = getPlayer(db, rater.id);
  const dialogue = player?.dialogue_id ? getDialogue(db, player.dialogue_id) : undefined;
  const view = dialogue && player?.character ? buildPlayerView(db, dialogue, player.character) : null;
  if (!player || player.state === 'done' || !roleplay || (player.state !== 'lobby' && !view)) {
    seeOther(res, lp.pages.withToken(lp.path(b, 'live/done'), rater));
    return;
  }
  const turns = view && dialogue ? turnsForPlayer(listTurnsAfter(db, dialogue.id, -1), view.names) : [];
  const live = dialogue ? getLiveDialogue(db, dialogue.id) : undefined;
  const lastIdx = dialogue ? (listTurnsAfter(db, dialogue.id, -1).at(-1)?.idx ?? -1) : -1;
  res.render('live/play', {
    ...lp.locals(res, rater, player.state === 'lobby' ? 'Waiting for your partner' : 'Your conversation'),
    phase: player.state,
    urls: playUrls(lp, b, rater, lastIdx),
    waitedSeconds: Math.max(0, Math.round((clock().getTime() - Date.parse(player.lobby_at)) / 1000)),
    waitMinutes: Math.ceil(roleplay.partner.waitSeconds / 60),
    // Without a fallback agent the lobby can say what happens when nobody comes; with one it says nothing of it.
    paidIfNobody: roleplay.partner.fallback === null,
    view,
    turns,
    state: live && live.state === 'active' ? { next: live.next_speaker, secondsLeft: Math.max(0, Math.round((Date.parse(live.turn_deadline_at) - clock().getTime()) / 1000)) } : null,
    turnsTaken: lastIdx + 1,
    turnSettings: roleplay.turns,
    endMessage: player.outcome ? endMessage(player.outcome) : '',
    textMax: TURN_TEXT_MAX,
  });
}

/** The code a player who reached the end is given, by their outcome. */
function codeFor(settings: BatchSettings, rater: RaterRow, outcome: PlayerOutcome | null): string | null {
  const codes = settings.provider.completionCodes;
  if (rater.status === 'no_consent') return codes.noConsent ?? null;
  if (rater.status !== 'completed') return null;
  if (outcome === 'no_partner') return codes.noPartner ?? codes.completed ?? null;
  if (outcome === 'closed') return codes.partial ?? codes.completed ?? null;
  return codes.completed ?? null;
}

/** The end: the completion code (and the way back to the platform), or what happened when there is none. */
export function donePage(lp: LivePages, res: Response, rater: RaterRow): void {
  const { settings } = batchOf(res);
  const player = getPlayer(lp.pages.deps.db, rater.id);
  const code = codeFor(settings, rater, player?.outcome ?? null);
  const away = rater.status === 'rating' && player?.outcome === 'away';
  const prolificUrl = rater.provider === 'prolific' && code ? prolificCompletionUrl(code) : null;
  const mturk =
    rater.provider === 'mturk' && rater.submit_to && rater.session_id !== MTURK_PREVIEW_ASSIGNMENT && rater.status === 'completed'
      ? { action: mturkSubmitUrl(rater.submit_to), assignmentId: rater.session_id ?? '', outcome: 'completed', code: code ?? '' }
      : null;
  res.render('live/done', {
    ...lp.locals(res, rater, rater.status === 'completed' ? 'Thank you' : away ? 'The conversation has ended' : 'Thank you for your time'),
    withdrawUrl: null,
    status: rater.status,
    outcome: player?.outcome ?? null,
    away,
    returnAdvice: returnAdvice(rater.provider),
    code,
    prolificUrl,
    mturk,
  });
}
