import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

// Issue 45: the README and the guides in docs/ link to each other; a moved section must not leave a dead link.
// Every relative link must name a file that exists, and every #anchor a heading of that file (GitHub's slugs).

const root = resolve(import.meta.dirname, '../..');
const md = new MarkdownIt();

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingSlugs(text: string): Set<string> {
  const seen = new Map<string, number>();
  const slugs = new Set<string>();
  const tokens = md.parse(text, {});
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1]?.children ?? [];
    const plain = inline.map((child) => (child.type === 'text' || child.type === 'code_inline' ? child.content : '')).join('');
    const base = plain.toLowerCase().trim().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  });
  return slugs;
}

function linksOf(text: string): string[] {
  const hrefs: string[] = [];
  const walk = (tokens: ReturnType<typeof md.parse>) => {
    for (const token of tokens) {
      if (token.type === 'link_open') hrefs.push(String(token.attrGet('href') ?? ''));
      if (token.children) walk(token.children);
    }
  };
  walk(md.parse(text, {}));
  return hrefs;
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))];

describe('documentation links', () => {
  it('README.md is under 200 lines and links every guide in docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(200);
    const linked = new Set(linksOf(readme).map((href) => resolve(root, href.split('#')[0] ?? '')));
    const unlinked = markdownFiles(join(root, 'docs')).filter((file) => !linked.has(file));
    expect(unlinked.map((file) => relative(root, file))).toEqual([]);
  });

  it.each(files.map((file) => [relative(root, file), file]))('every relative link and anchor in %s resolves', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const broken: string[] = [];
    for (const href of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto: and the like are not ours to check
      const [path = '', anchor] = href.split('#');
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${href}: no file ${relative(root, target)}`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !headingSlugs(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${href}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('the anchor check knows a heading from a missing one', () => {
    const slugs = headingSlugs('# Deploying\n\n## A VM behind Caddy\n\n## Upgrades, and restore\n\n## Upgrades, and restore\n');
    expect([...slugs]).toEqual(['deploying', 'a-vm-behind-caddy', 'upgrades-and-restore', 'upgrades-and-restore-1']);
  });
});
