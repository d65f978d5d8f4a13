// Finding leaks in what a rater's browser receives (used by the HTTP and the browser blinding tests).
import type { Db } from '../../src/db/connection.js';
import { makeScenario } from '../helpers/factories.js';
import type { Page } from 'playwright-core';
import type { Exchange } from './rating-fixtures.js';

const NOW = '2026-01-15T12:00:00.000Z';

/**
 * Pads every table with one row at a distinctive high id, so the ids the walk creates are seven-digit numbers that
 * cannot appear in a page by chance: finding one in a response means an internal id leaked.
 */
export function padInternalIds(db: Db): void {
  const scenario = makeScenario(db);
  db.prepare('UPDATE casts SET id = 1731000 WHERE id = :id').run({ id: scenario.castId });
  db.prepare("INSERT INTO runs (id, name, kind, state, created_at) VALUES (7919000, 'pad-run', 'import', 'complete', :now)").run({ now: NOW });
  const dialogue = db.prepare(
    `INSERT INTO dialogues (id, run_id, scenario_id, cast_id, sample_index, mode, model, origin, state, created_at)
     VALUES (:id, 7919000, :scenario, 1731000, 0, :mode, 'pad', 'imported', 'complete', :now)`,
  );
  dialogue.run({ id: 8123000, scenario: scenario.scenarioId, mode: 'SCRIPT', now: NOW });
  dialogue.run({ id: 8123001, scenario: scenario.scenarioId, mode: 'AGENTS', now: NOW });
  db.prepare("INSERT INTO batches (id, public_id, name, state, settings, judge_salt, created_at) VALUES (9341000, 'pad-batch', 'pad', 'closed', '{}', 's', :now)").run({ now: NOW });
  db.prepare("INSERT INTO comparisons (id, batch_id, position, condition_a, condition_b) VALUES (3313000, 9341000, 0, 'SCRIPT:pad', 'AGENTS:pad')").run();
  db.prepare(
    `INSERT INTO pairs (id, batch_id, comparison_id, dialogue_a_id, dialogue_b_id, scenario_id, cast_id, sample_index)
     VALUES (6271000, 9341000, 3313000, 8123000, 8123001, :scenario, 1731000, 0)`,
  ).run({ scenario: scenario.scenarioId });
  db.prepare("INSERT INTO raters (id, batch_id, public_id, provider, session_id, status, created_at, last_seen_at) VALUES (5113000, 9341000, 'pad-rater', 'link', 'pad', 'rating', :now, :now)").run({ now: NOW });
  db.prepare(
    "INSERT INTO assignments (id, public_id, batch_id, pair_id, rater_id, left_side, state, leased_at, expires_at) VALUES (4421000, 'pad-a', 9341000, 6271000, 5113000, 'a', 'void', :now, :now)",
  ).run({ now: NOW });
  db.prepare(
    `INSERT INTO judgments (id, assignment_id, batch_id, pair_id, rater_id, left_side, choice, winner, label, shown_at, submitted_at, question_version)
     VALUES (3917000, 4421000, 9341000, 6271000, 5113000, 'a', 'left', 'a', 'SCRIPT:pad', :now, :now, 1)`,
  ).run({ now: NOW });
  db.prepare("INSERT INTO content_reports (id, batch_id, pair_id, reason, created_at) VALUES (2713000, 9341000, 6271000, 'pad', :now)").run({ now: NOW });
}

/** Markup and header words that contain a mode name but say nothing about any dialogue. */
function withoutBenignMarkup(text: string): string {
  return text
    .replace(/<\/?script\b/gi, '<tag')
    .replace(/script-src(-attr|-elem)?/gi, 'x-src')
    .replace(/(text|application)\/javascript/gi, 'mime/js');
}

export function internalIds(db: Db): string[] {
  const ids = (sql: string) => db.prepare(sql).pluck().all() as number[];
  return [
    ...ids('SELECT id FROM batches'),
    ...ids('SELECT id FROM runs'),
    ...ids('SELECT id FROM dialogues'),
    ...ids('SELECT id FROM pairs'),
    ...ids('SELECT id FROM comparisons'),
    ...ids('SELECT id FROM raters'),
    ...ids('SELECT id FROM assignments'),
    ...ids('SELECT id FROM judgments'),
    ...ids('SELECT id FROM content_reports'),
    ...ids('SELECT id FROM casts'),
  ]
    .filter((id) => id >= 1_000_000)
    .map(String);
}

/** Every place a rater's browser could read: the URL asked for, the status line's headers, the body. */
export function leaks(exchanges: Exchange[], forbidden: string[], ids: string[]): string[] {
  const found: string[] = [];
  for (const ex of exchanges) {
    const headerText = Object.entries(ex.headers)
      .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
      .join('\n');
    const surfaces = { url: ex.url, headers: headerText, body: ex.body };
    for (const [where, raw] of Object.entries(surfaces)) {
      const text = withoutBenignMarkup(raw);
      const mode = /script|agents|mindreaders/i.exec(text);
      if (mode) found.push(`${ex.method} ${ex.url} ${where}: mode name "${mode[0]}" near "${text.slice(Math.max(0, mode.index - 40), mode.index + 40)}"`);
      for (const word of forbidden) if (text.toLowerCase().includes(word.toLowerCase())) found.push(`${ex.method} ${ex.url} ${where}: "${word}"`);
      for (const id of ids) if (new RegExp(`(^|[^0-9])${id}([^0-9]|$)`).test(text)) found.push(`${ex.method} ${ex.url} ${where}: internal id ${id}`);
    }
  }
  return found;
}


/** Records every response the page receives (redirects without their body), for the leak check; await all at the end. */
export function recordExchanges(page: Page): Promise<Exchange>[] {
  const exchanges: Promise<Exchange>[] = [];
  page.on('response', (res) => {
    exchanges.push(
      (async () => ({
        method: res.request().method(),
        url: res.url(),
        status: res.status(),
        headers: await res.allHeaders(),
        body: res.status() >= 300 && res.status() < 400 ? '' : await res.text().catch(() => ''),
      }))(),
    );
  });
  return exchanges;
}
