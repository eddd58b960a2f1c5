#!/usr/bin/env node
// `npm run bench` runs every benchmark; `node bench/run.mjs server curve` runs the named ones; arguments after
// `--` go to each of them. Every benchmark writes bench/results/<name>.json and prints a summary. Benchmarks are
// not tests: they report figures against targets, they do not fail a build on a slow machine.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const results = (name) => `--out=bench/results/${name}.json`;
/** name → [script (relative to the project root), argv before the script, argv after it] */
const benchmarks = {
  server: ['bench/server_bench.mjs', [], []], // writes bench/results/server.json itself
  curve: ['bench/curve.mjs', [], [results('curve')]],
  client: ['bench/client.ts', ['--import', 'tsx'], [results('client')]],
};

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const names = split < 0 ? argv : argv.slice(0, split);
const passThrough = split < 0 ? [] : argv.slice(split + 1);
const unknown = names.filter((n) => !(n in benchmarks));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(benchmarks).join(', ')}`);
  process.exit(2);
}

let failed = 0;
for (const name of names.length ? names : Object.keys(benchmarks)) {
  const [script, before, after] = benchmarks[name];
  if (!existsSync(new URL(`../${script}`, import.meta.url))) {
    console.error(`=== bench ${name}: missing ${script}`);
    failed += 1;
    continue;
  }
  console.log(`\n=== bench: ${name}`);
  const r = spawnSync(process.execPath, [...before, script, ...after, ...passThrough], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
