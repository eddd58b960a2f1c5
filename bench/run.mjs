#!/usr/bin/env node
// `npm run bench` runs every benchmark; `node bench/run.mjs server` runs the named ones. Each benchmark is a
// script next to this file that writes bench/results/<name>.json and prints a summary. Benchmarks are not tests:
// they report figures and targets, they do not pass or fail a build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
/** name → script (relative to bench/) */
const benchmarks = {
  server: 'server_bench.mjs',
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !(n in benchmarks));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; available: ${Object.keys(benchmarks).join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length ? wanted : Object.keys(benchmarks)) {
  const script = join(here, benchmarks[name]);
  if (!existsSync(script)) { console.error(`missing ${script}`); failed += 1; continue; }
  console.log(`\n=== bench: ${name}`);
  const r = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (r.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
