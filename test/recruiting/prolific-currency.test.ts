// Issue 50, item 7: Prolific pays in its workspace's currency. A batch in dollars published from a workspace in pounds
// would pay its amounts in pounds; publish reads the workspace's currency before creating the study and the study's
// after, and refuses a mismatch with both named.
import { describe, expect, it } from 'vitest';
import { listBatchOperations } from '../../src/recruiting/platform-operations.queries.js';
import { cli } from '../helpers/run-cli.js';
import { prolificSetup } from './prolific-helpers.js';

describe('prolific publish and the workspace currency', () => {
  it('prolific publish, for a batch in dollars and a workspace in pounds, is refused before any study is created, naming both currencies', async () => {
    const setup = await prolificSetup({ settings: { pay: '$2.00' } });
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(1);
    const workspace = setup.fake.workspaces[0];
    expect(published.stderr).toContain(`Batch ${setup.seeded.batchId} pays in USD, but the Prolific workspace "My workspace" (${workspace?.id}) pays in GBP`);
    expect(published.stderr).toContain('Nothing was created.');
    expect(setup.fake.studies.size).toBe(0);
    expect(setup.fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
    expect(listBatchOperations(setup.db, setup.seeded.batchId)).toEqual([]);
  });

  it('prolific publish, with two workspaces in different currencies and none chosen, is refused naming the one that does not pay in the batch currency', async () => {
    const setup = await prolificSetup({ fake: { currency: 'GBP', otherWorkspaces: [{ id: 'ws-us-lab', title: 'US lab', currency: 'USD' }] } });
    const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], setup.cliEnv);
    expect(published.code).toBe(1);
    expect(published.stderr).toContain('pays in GBP, but the Prolific workspace "US lab" (ws-us-lab) pays in USD');
    expect(published.stderr).toContain('set PROLIFIC_WORKSPACE_ID');
    expect(setup.fake.studies.size).toBe(0);
  });

  it('prolific publish, when the study is created in a workspace of another currency than the one checked, leaves it an unpublished draft, says so, and refuses again on the next run', async () => {
    const setup = await prolificSetup({ settings: { pay: '$2.00' }, fake: { currency: 'GBP', otherWorkspaces: [{ id: 'ws-us-lab', title: 'US lab', currency: 'USD' }] } });
    const env = { ...setup.cliEnv, PROLIFIC_WORKSPACE_ID: 'ws-us-lab' };
    for (let run = 0; run < 2; run++) {
      const published = await cli(['prolific', 'publish', String(setup.seeded.batchId)], env);
      expect(published.code).toBe(1);
      const study = [...setup.fake.studies.values()][0];
      expect(published.stderr).toContain(`Batch ${setup.seeded.batchId} pays in USD, but its Prolific study ${study?.id} pays in GBP (its workspace's currency), so simarena will not publish.`);
      expect(published.stderr).toContain('It is left as a draft on Prolific, unpublished, and nothing is paid.');
      expect(setup.fake.studies.size).toBe(1);
      expect(study?.status).toBe('UNPUBLISHED');
    }
    expect(setup.fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/transition/'))).toEqual([]);
    expect(listBatchOperations(setup.db, setup.seeded.batchId).map((o) => [o.kind, o.state])).toEqual([['study_create', 'confirmed']]);
  });
});
