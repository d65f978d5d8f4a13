// A researcher opening a batch's analysis (JSON API) every second, as its own process: the rater-load benchmark's
// virtual raters must not wait on this client's work (reading 14 MB at a million judgments) in their own event loop,
// any more than real raters' browsers wait on a researcher's. Prints one line per request until `seconds` pass.
//   npx tsx scripts/bench/support/analysis-opener.ts <origin> <batch id> <api token> <seconds>
import http from 'node:http';

const [origin = '', batchId = '', token = '', seconds = '0'] = process.argv.slice(2);
const until = performance.now() + Number(seconds) * 1000;
const base = new URL(origin);

function fetchAnalysis(): Promise<string> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, path: `/api/batches/${batchId}/analysis`, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const head = Buffer.concat(chunks).subarray(0, 4096).toString('utf8');
          const n = /"n_judgments":\s*(\d+)/.exec(head)?.[1] ?? '?';
          const age = res.headers.age === undefined ? '' : `, age ${res.headers.age} s`;
          const updating = res.headers['x-analysis-updating'] === 'true' ? ', updating' : '';
          resolve(`${res.statusCode} in ${(performance.now() - started).toFixed(0)} ms: n_judgments ${n}${age}${updating}`);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

while (performance.now() < until) {
  console.log(await fetchAnalysis());
  await new Promise((r) => setTimeout(r, 1000));
}
