// Issue 53 in the console's batch form: a which-is-real question (its kind, real condition and confidence) and the
// equivalence margin are typed in the form, read back into it when the batch is edited (so saving an edit loses none
// of them), refused beside the field they are about, and the margin is frozen once the batch has opened.
import { describe, expect, it } from 'vitest';
import { transitionBatch } from '../../src/batches/batch.commands.js';
import { batchSettingsSchema } from '../../src/batches/batch.schema.js';
import { formToSettings, settingsToForm } from '../../src/console/batch-form.js';
import { signIn } from '../auth/session-helpers.js';
import { buildTestApp } from '../helpers/test-app.js';
import { MODEL } from '../rating/rating-fixtures.js';
import { OPENED_AT, REAL, realismSettings, seedRealismBatch } from '../rating/realism-fixtures.js';

const storedSettings = (db: ReturnType<typeof buildTestApp>['db'], id: number) => JSON.parse(db.prepare('SELECT settings FROM batches WHERE id = ?').pluck().get(id) as string);

function formFields(seeded: { runNames: string[] }, overrides: Record<string, string | string[]> = {}) {
  return {
    name: 'Realism from the console',
    runs: seeded.runNames,
    comparisons: `${REAL} vs SCRIPT:${MODEL}\nAGENTS:${MODEL} vs ${REAL}`,
    scenarios: 'all',
    judgmentsPerPair: '3',
    question: 'Which conversation sounds more natural?',
    questionId: 'natural',
    reason: 'off',
    q2Id: 'real',
    q2Text: 'One of these conversations happened between two real people. Which one?',
    q2Reason: 'off',
    q2Kind: 'which-is-real',
    q2Real: REAL,
    q2Confidence: 'required',
    equivalenceMargin: '0.05',
    context: 'scenario+profiles+goals',
    perRaterCap: '10',
    leaseMinutes: '20',
    providerKind: 'link',
    estimatedMinutes: '10',
    pay: '£3.00',
    consent: 'You agree to take part.',
    instructions: 'Answer both questions.',
    ...overrides,
  };
}

describe('which-is-real questions in the console batch form', () => {
  it('settingsToForm then formToSettings gives back a realism batch\'s questions and margin as they were', () => {
    const settings = batchSettingsSchema.parse(realismSettings(['people', 'models']));
    const again = batchSettingsSchema.parse(formToSettings(settingsToForm(settings)));
    expect(again.questions).toEqual(settings.questions);
    expect(again.equivalenceMargin).toBe(settings.equivalenceMargin);
  });

  it('POST /console/batches/new with a which-is-real second question and a margin stores them; the edit page shows them chosen', async () => {
    const t = buildTestApp();
    const seeded = seedRealismBatch(t.db, { open: false });
    const admin = await signIn(t.app, t.db, 'admin');
    const created = await admin.agent.post('/console/batches/new').type('form').send({ _csrf: admin.csrf, intent: 'create', ...formFields(seeded) });
    expect(created.status).toBe(303);
    const id = Number(/\/console\/batches\/(\d+)/.exec(String(created.headers.location))?.[1]);
    const stored = storedSettings(t.db, id);
    expect(stored.questions[1]).toEqual({ id: 'real', text: 'One of these conversations happened between two real people. Which one?', kind: 'which-is-real', real: REAL, allowTie: false, reason: 'off', confidence: 'required' });
    expect(stored.questions[0]).toEqual({ id: 'natural', text: 'Which conversation sounds more natural?', allowTie: false, reason: 'off' });
    expect(stored.equivalenceMargin).toBe(0.05);
    const edit = await admin.agent.get(`/console/batches/${id}/edit`).expect(200);
    expect(edit.text).toMatch(/<option value="which-is-real" selected>/);
    expect(edit.text).toContain(`name="q2Real" value="${REAL}"`);
    expect(edit.text).toContain('name="equivalenceMargin" min="0.001" max="0.25" step="0.001" value="0.05"');
  });

  it('POST /console/batches/new, with a which-is-real question without its real condition, answers 400 with the message beside that field and stores nothing', async () => {
    const t = buildTestApp();
    const seeded = seedRealismBatch(t.db, { open: false });
    const admin = await signIn(t.app, t.db, 'admin');
    const before = t.db.prepare('SELECT count(*) FROM batches').pluck().get();
    const refused = await admin.agent.post('/console/batches/new').type('form').send({ _csrf: admin.csrf, intent: 'create', ...formFields(seeded, { q2Real: '' }) });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<p class="field-error" id="q2Real-error">a which-is-real question names the condition that is real, e.g. &#34;real&#34;: &#34;HUMANS:human&#34;</p>');
    expect(t.db.prepare('SELECT count(*) FROM batches').pluck().get()).toBe(before);
  });

  it('POST /console/batches/:id/edit of a batch that has opened shows the margin frozen and refuses a changed one, keeping the stated margin', async () => {
    const t = buildTestApp();
    const seeded = seedRealismBatch(t.db, { open: false });
    transitionBatch(t.db, seeded.batchId, 'open', 'test', OPENED_AT);
    const admin = await signIn(t.app, t.db, 'admin');
    const edit = await admin.agent.get(`/console/batches/${seeded.batchId}/edit`).expect(200);
    expect(edit.text).toMatch(/name="equivalenceMargin"[^>]*value="0.1" readonly/);
    const fields = formFields(seeded, { name: 'Which is real', equivalenceMargin: '0.2', q2Confidence: '', comparisons: `${REAL} vs SCRIPT:${MODEL}\nAGENTS:${MODEL} vs ${REAL}` });
    const refused = await admin.agent.post(`/console/batches/${seeded.batchId}/edit`).type('form').send({ _csrf: admin.csrf, ...fields });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('its equivalenceMargin was stated in advance and can no longer change');
    expect(storedSettings(t.db, seeded.batchId).equivalenceMargin).toBe(0.1);
  });
});
