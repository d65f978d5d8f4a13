// The test suite's fake OpenAI-compatible server as its own process, so that in benchmarks its CPU time
// does not compete with the code being measured. Prints its base URL on the first line of stdout.
//   npx tsx scripts/bench/support/fake-llm-server.ts <latency-ms>
import { startFakeLlm } from '../../../test/helpers/fake-llm.js';

const fake = await startFakeLlm({ latencyMs: Number(process.argv[2] ?? 0) });
// Keep no history: a benchmark sends many requests.
fake.setResponder((request, index) => {
  fake.requests.length = 0;
  fake.answered.length = 0;
  const turn = /You are at Turn #(\d+)/.exec(request.body.messages[0]?.content ?? '')?.[1] ?? '0';
  return { content: JSON.stringify({ action: 'speak', text: `Reply ${index} at turn ${turn}.` }) };
});
console.log(fake.baseUrl);
process.on('SIGTERM', () => void fake.close().then(() => process.exit(0)));
