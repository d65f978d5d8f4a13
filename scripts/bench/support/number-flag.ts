// The benchmarks' options: `--name N` on the command line, or the fallback.

export function numberFlag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}

/** `--name VALUE` on the command line, or undefined. */
export function stringFlag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
}
