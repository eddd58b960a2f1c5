// `--name=value` options of the TypeScript benchmark scripts (the .mjs scripts use args.mjs).

export interface CliArgs {
  get(name: string): string | undefined;
  /** A positive integer option, or `fallback` when absent; anything else is an error. */
  int(name: string, fallback: number): number;
}

export function readCliArgs(argv: readonly string[] = process.argv.slice(2)): CliArgs {
  const args = new Map(argv.map((a) => {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unrecognised argument '${a}'`);
    return [m[1]!, m[2] ?? 'true'] as const;
  }));
  return {
    get: (name) => args.get(name),
    int(name, fallback) {
      const v = args.get(name);
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${v}'`);
      return n;
    },
  };
}
