// Issue 49, item 5: long reasons. 11,200 pasted characters were cut to 2,000 without a word (the box's maxlength), a
// longer value was refused with a message at the top of a long page, and a reason within the limit could still be
// refused: its line breaks, sent as CR LF, counted twice, and 2,000 characters of Chinese overflowed the 16 KB form.
import { describe, expect, it } from 'vitest';
import { count, raterClient, seedBatch, testApp } from './rating-fixtures.js';

/** The text of the page's reason box, unescaped. */
function reasonBoxText(html: string, id = 'reason'): string | undefined {
  const match = new RegExp(`<textarea id="${id}"[^>]*>([\\s\\S]*?)</textarea>`).exec(html);
  return match?.[1]?.replace(/&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

describe('reason length over HTTP', () => {
  it('GET /r/:batch/c/:assignment shows the limit under each reason box, tied to it by aria-describedby, and no maxlength that would cut a paste', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { reason: 'optional' } });
    const page = await raterClient(app).startRating(seeded.publicId);
    expect(page.res.text).toMatch(/<textarea id="reason" name="reason" data-limit="2000" aria-describedby="reason-limit">/);
    expect(page.res.text).toContain('<p class="reason-limit" id="reason-limit">Up to 2,000 characters.<span class="reason-count" id="reason-count" aria-hidden="true"></span><span class="visually-hidden" id="reason-status" aria-live="polite"></span></p>');
    expect(page.res.text).not.toMatch(/<textarea[^>]*maxlength/);
  });

  it('POST /r/:batch/c/:assignment, with a reason of 11,200 characters, answers 400 with its length and the limit beside the box, keeps the whole text for editing and stores nothing', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { reason: 'optional' } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const pasted = `${'It reads like a real conversation & "nobody" rushes <anything>. '.repeat(175).trimEnd()}!`;
    expect(pasted.length).toBe(11_200);
    const refused = await rater.submit(page.res.text, { choice: 'left', reason: pasted });
    expect(refused.status).toBe(400);
    const message = 'This reason is 11,200 characters long; the limit is 2,000. Please shorten it by 9,200 characters.';
    // Beside the box (between its label and the box, which points to it), and at the top as a link to the box.
    expect(refused.text).toMatch(
      new RegExp(`<label for="reason">Why\\? \\(optional\\)</label>\\s*<p class="field-error" id="reason-error">${message.replace(/[.()?]/g, '\\$&')}</p>\\s*<textarea id="reason" name="reason" data-limit="2000" aria-describedby="reason-limit reason-error" aria-invalid="true">`),
    );
    expect(refused.text).toContain(`<a href="#reason">${message}</a>`);
    expect(reasonBoxText(refused.text)).toBe(pasted);
    expect(refused.text).toMatch(/value="left" required checked>/);
    expect(count(db, 'SELECT count(*) FROM judgments')).toBe(0);
  });

  it('POST /r/:batch/c/:assignment, with a reason of exactly 2,000 characters whose line breaks arrive as CR LF, stores it whole with its line breaks', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { reason: 'optional' } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    // What a browser sends for a box holding 2,000 characters, 40 of them line breaks: 2,040 with the CRs.
    const typed = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, '0')}${'w'.repeat(47)}`).join('\n');
    const boxText = `${typed}${'z'.repeat(2000 - typed.length)}`;
    expect(boxText.length).toBe(2000);
    const posted = await rater.submit(page.res.text, { choice: 'left', reason: boxText.replace(/\n/g, '\r\n') });
    expect(posted.status).toBe(303);
    expect(db.prepare('SELECT reason FROM judgments').pluck().get()).toBe(boxText);
  });

  it('POST /r/:batch/c/:assignment, with a reason of 2,000 Chinese characters (18,000 bytes as the form sends them), stores it', async () => {
    const { app, db } = testApp();
    const seeded = seedBatch(db, { settings: { reason: 'optional' } });
    const rater = raterClient(app);
    const page = await rater.startRating(seeded.publicId);
    const reason = '第二段对话更自然，'.repeat(223).slice(0, 2000);
    expect(reason.length).toBe(2000);
    const posted = await rater.submit(page.res.text, { choice: 'right', reason });
    expect(posted.status).toBe(303);
    expect(db.prepare('SELECT reason FROM judgments').pluck().get()).toBe(reason);
  });
});
