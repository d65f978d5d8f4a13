import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ejs from 'ejs';
import { describe, expect, it } from 'vitest';
import { createTemplateCompiler, localDeclarations } from '../../src/web/ejs-templates.js';
import { tempDir } from '../helpers/test-db.js';

// Templates compiled without `with (locals)`, their locals declared from their own code, must render exactly what
// EJS's default compilation renders, for the locals a route passes and for those it leaves out.

function viewsWith(files: Record<string, string>): string {
  const dir = `${tempDir()}/`;
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const PAGE = [
  "<%- include('/partials/top', { heading: title.toUpperCase() }) %>",
  '<% const total = items.reduce((sum, item) => sum + item.n, 0); %>',
  "<ul><% for (const item of items) { %><li class=\"<%= item.n > 1 ? 'many' : 'one' %>\"><%= item.name %>: <%= item.n %></li><% } %></ul>",
  '<p>Total <%= total %>, rounded <%= Math.round(total / 3) %>, JSON <%- JSON.stringify({ total }) %></p>',
  "<% if (typeof note === 'string' && note) { %><p class=\"note\"><%= note %></p><% } %>",
  "<p><%= locals.extra ?? 'no extra' %> <%# a comment naming nothing %> <%% literal %></p>",
  "<% const { first, second: renamed } = pair; %><p><%= first %>/<%= renamed %></p>",
].join('\n');
const TOP = '<h1><%= heading %></h1><% if (typeof note === "string") { %><small><%= note %></small><% } %>';

describe('templates compiled without with (src/web/ejs-templates.ts)', () => {
  it('render what EJS renders with `with (locals)`, with optional locals present or absent, globals, escapes and includes', () => {
    const dir = viewsWith({ 'page.ejs': PAGE, 'partials/top.ejs': TOP });
    const compiled = createTemplateCompiler(dir).template(join(dir, 'page.ejs'));
    const reference = ejs.compile(PAGE, { filename: join(dir, 'page.ejs'), root: dir, views: [dir] });
    const cases = [
      { title: 'Items <b>', items: [{ name: 'a & b', n: 2 }, { name: '<script>', n: 1 }], pair: { first: 1, second: 2 } },
      { title: 'x', items: [], note: 'Careful "quoted"', extra: 'extra!', pair: { first: 'f', second: 's' } },
      // A local named like a global is the local, as with `with`.
      { title: 'y', items: [{ name: 'n', n: 3 }], pair: { first: 0, second: 0 }, JSON: { stringify: () => 'local JSON' } },
    ];
    for (const locals of cases) {
      const html = compiled(locals) as string;
      expect(html).toBe(reference(locals));
      expect(html).toContain(`<h1>${locals.title.toUpperCase().replace('<', '&lt;').replace('>', '&gt;')}</h1>`);
    }
    expect(compiled(cases[0])).toContain('&lt;script&gt;');
    expect(compiled(cases[2])).toContain('JSON local JSON');
  });

  it('declare nothing the template declares itself, and keep the file line numbers in errors, in includes too', () => {
    const declarations = `, ${localDeclarations(PAGE)}`;
    for (const local of ['title', 'items', 'note', 'pair']) expect(declarations).toContain(`, ${local} = locals.${local}`);
    for (const own of ['total', 'item', 'first', 'renamed', 'include', 'locals']) expect(declarations).not.toContain(`, ${own} =`);
    expect(declarations).toContain(", Math = ('Math' in locals ? locals.Math : globalThis.Math)");

    const dir = viewsWith({ 'broken.ejs': 'line one\nline two\n<%= missing.field %>\n', 'outer.ejs': "a\n<%- include('broken') %>" });
    const templates = createTemplateCompiler(dir);
    expect(() => templates.template(join(dir, 'broken.ejs'))({})).toThrow(/broken\.ejs:3/);
    expect(() => templates.template(join(dir, 'outer.ejs'))({})).toThrow(/broken\.ejs:3/);
  });
});
