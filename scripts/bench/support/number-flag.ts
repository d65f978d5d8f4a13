// The benchmarks' numeric options: `--name N` on the command line, or the fallback.

export function numberFlag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
}
