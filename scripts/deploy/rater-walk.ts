// One rater through a running server, from a study link to the completion code, following the forms and redirects the
// pages give (as the rater-load benchmark's virtual raters do): the smoke test of a deployment (container-check.sh).
//   npx tsx scripts/deploy/rater-walk.ts <rater link>
// Prints the completion code and the number of answers given; exits 1 when the walk does not reach a code.
import { createAgent, createBrowser, findForms } from '../bench/support/form-client.js';

const link = process.argv[2];
if (!link) {
  process.stderr.write('usage: rater-walk.ts <rater link>\n');
  process.exit(2);
}
const origin = new URL(link).origin;
const browser = createBrowser(origin, createAgent(1));
const MAX_STEPS = 200;

let url = link;
let method: 'GET' | 'POST' = 'GET';
let form: [string, string][] | undefined;
let answers = 0;
for (let step = 0; step < MAX_STEPS; step++) {
  const reply = await browser.request(method, url, form);
  if (reply.status >= 300 && reply.status < 400 && reply.location) {
    url = new URL(reply.location, url).toString();
    [method, form] = ['GET', undefined];
    continue;
  }
  if (reply.status !== 200) throw new Error(`${method} ${url} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  const code = /class="completion-code"[\s\S]*?<strong>([^<]+)<\/strong>/.exec(reply.body)?.[1];
  if (code) {
    process.stdout.write(`completion code ${code} after ${answers} answers\n`);
    process.exit(0);
  }
  const next = findForms(reply.body)[0];
  if (!next) throw new Error(`${url}: no form to go on with and no completion code:\n${reply.body.slice(0, 500)}`);
  if (next.hasChoice) answers += 1;
  [method, url, form] = ['POST', new URL(next.action, url).toString(), next.fields];
}
throw new Error(`no completion code after ${MAX_STEPS} steps`);
