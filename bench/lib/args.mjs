// `--name=value` / `--flag` command-line options of the benchmark scripts, with typed accessors that reject junk.

export function parseArgs(argv = process.argv.slice(2)) {
  const opts = new Map();
  for (const a of argv) {
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(a);
    if (!m) throw new Error(`unrecognised argument '${a}' (options look like --name=value or --flag)`);
    opts.set(m[1], m[2] ?? true);
  }
  return {
    has: (name) => opts.has(name),
    string(name, fallback) {
      const v = opts.get(name);
      if (v === undefined) return fallback;
      if (v === true) throw new Error(`--${name} needs a value`);
      return v;
    },
    int(name, fallback, min = 1) {
      const v = opts.get(name);
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got '${v}'`);
      return n;
    },
    ints(name, fallback) {
      const v = opts.get(name);
      if (v === undefined) return fallback;
      const list = String(v).split(',').map(Number);
      if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--${name} must be a comma-separated list of positive integers, got '${v}'`);
      return list;
    },
    names: () => [...opts.keys()],
  };
}
