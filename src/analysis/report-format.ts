// Number formatting shared by the Markdown and HTML reports (the JSON report keeps full precision).

export const pct = (x: number | null | undefined, digits = 1) => (x === null || x === undefined ? '–' : `${(x * 100).toFixed(digits)}%`);
export const num = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? '–' : x.toFixed(digits));
export const ci = (c: [number, number] | null | undefined) => (c ? `[${pct(c[0])}, ${pct(c[1])}]` : '–');
export const pValue = (p: number | null | undefined) => (p === null || p === undefined ? '–' : p < 0.001 ? p.toExponential(2) : p.toFixed(3));

export type Table = { headers: string[]; rows: (string | number)[][] };
