// Reads a V8 .cpuprofile (node --cpu-prof) and lists where the time went: by self time, and the project's own
// functions by inclusive time (their callees, SQLite included, counted in).
import { readFileSync } from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] };
type Profile = { nodes: Node[]; startTime: number; endTime: number };

export function summarizeCpuProfile(file: string, top = 25): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const total = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
  const name = (n: Node) => {
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(/^.*?\/(src|node_modules|scripts)\//, '$1/');
    return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (hits === 0) continue;
    self.set(name(n), (self.get(name(n)) ?? 0) + hits);
    const packages = new Set<string>();
    for (let cur: Node | undefined = n; cur; cur = byId.get(parent.get(cur.id) ?? -1)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(cur.callFrame.url)?.[1];
      if (pkg) packages.add(pkg);
    }
    for (const pkg of packages) byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + hits);
    const seen = new Set<string>();
    for (let cur: Node | undefined = n; cur; cur = byId.get(parent.get(cur.id) ?? -1)) {
      if (!cur.callFrame.url.includes('/src/')) continue;
      const key = name(cur);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + hits);
    }
  }
  const list = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  // Where the self time goes, by kind of code: SQL (the project's query modules, whose self time includes SQLite's
  // native work, and better-sqlite3), the rest of the project, each package, Node's own code, and V8's bookkeeping.
  const kinds = new Map<string, number>();
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (hits === 0) continue;
    const url = n.callFrame.url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    const kind =
      /\.queries\.ts$/.test(url) || pkg === 'better-sqlite3'
        ? 'SQL (*.queries.ts, better-sqlite3)'
        : url.includes('/src/')
          ? 'simarena (other)'
          : url.includes('/views/')
            ? 'templates (compiled EJS)'
            : pkg
              ? `package ${pkg}`
              : url.startsWith('node:')
                ? 'node internals'
                : n.callFrame.functionName.startsWith('(')
                  ? n.callFrame.functionName
                  : 'native / other';
    kinds.set(kind, (kinds.get(kind) ?? 0) + hits);
  }
  // Who calls the heaviest project functions: self time of each, split by its caller.
  const callers = new Map<string, Map<string, number>>();
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (hits === 0 || !n.callFrame.url.includes('/src/')) continue;
    const up = byId.get(parent.get(n.id) ?? -1);
    const byCaller = callers.get(name(n)) ?? new Map<string, number>();
    byCaller.set(up ? name(up) : '(root)', (byCaller.get(up ? name(up) : '(root)') ?? 0) + hits);
    callers.set(name(n), byCaller);
  }
  const heaviest = [...self].filter(([k]) => callers.has(k)).sort((a, b) => b[1] - a[1]).slice(0, 5);
  const callerLines = heaviest.flatMap(([k]) => [
    `  ${k}`,
    ...[...(callers.get(k) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([c, v]) => `    ${((100 * v) / total).toFixed(1).padStart(5)}%  from ${c}`),
  ]);
  return [
    'self time (all code):',
    ...list(self),
    "inclusive time (simarena's own functions, callees included):",
    ...list(inclusive),
    'inclusive time by package (its callees included):',
    ...list(byPackage),
    'self time by kind of code:',
    ...list(kinds),
    'callers of the heaviest project functions:',
    ...callerLines,
  ];
}
