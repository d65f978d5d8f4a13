// A researcher opening a batch's analysis every second, as its own process: the rater-load benchmark's virtual raters
// must not wait on this client's work (reading 10 MB at a million judgments) in their own event loop, any more than
// real raters' browsers wait on a researcher's. `api`: the JSON of GET /api/batches/:id/analysis. `console`: the
// console's analysis page signed in as the admin, then each plot its page shows, as a browser loads them. Prints one
// line per opening until `seconds` pass.
//   npx tsx scripts/bench/support/analysis-opener.ts <origin> <batch id> <api token> <seconds> [api|console]
import { ADMIN } from './bench-study.js';
import { type Browser, consoleBrowser, createAgent, createBrowser } from './form-client.js';

const [origin = '', batchId = '', token = '', seconds = '0', via = 'api'] = process.argv.slice(2);
const until = performance.now() + Number(seconds) * 1000;
const agent = createAgent(2);

async function openApi(browser: Browser): Promise<string> {
  const reply = await browser.request('GET', `/api/batches/${batchId}/analysis`, undefined, { authorization: `Bearer ${token}`, accept: 'application/json', 'accept-encoding': 'gzip' });
  const n = /"n_judgments":\s*(\d+)/.exec(reply.body.slice(0, 4096))?.[1] ?? '?';
  const age = reply.headers.age === undefined ? '' : `, age ${reply.headers.age} s`;
  const updating = reply.headers['x-analysis-updating'] === 'true' ? ', updating' : '';
  return `${reply.status} in ${reply.ms.toFixed(0)} ms: n_judgments ${n}${age}${updating}`;
}

async function openConsole(browser: Browser): Promise<string> {
  const page = await browser.request('GET', `/console/batches/${batchId}/analysis`);
  const plots = [...page.body.matchAll(/<img src="([^"]+\/plots\/[^"]+)"/g)].map((m) => (m[1] as string).replace(/&amp;/g, '&'));
  const times = [];
  for (const plot of plots) times.push((await browser.request('GET', plot)).ms);
  const n = /([\d,]+) judgments? on/.exec(page.body)?.[1] ?? '?';
  const age = /data-testid="analysis-age">([^<]*)</.exec(page.body)?.[1]?.replace(/\s+/g, ' ') ?? '';
  return `${page.status} in ${page.ms.toFixed(0)} ms, ${plots.length} plots in ${times.map((t) => t.toFixed(0)).join('/')} ms: ${n} judgments; ${age}`;
}

const browser = via === 'console' ? await consoleBrowser(origin, agent, ADMIN) : createBrowser(origin, agent);
while (performance.now() < until) {
  console.log(via === 'console' ? await openConsole(browser) : await openApi(browser));
  await new Promise((r) => setTimeout(r, 1000));
}
agent.destroy();
