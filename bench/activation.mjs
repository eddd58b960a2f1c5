#!/usr/bin/env node
// Activation time of the extension in the real VS Code (code-server) of the end-to-end suite. This script does
// not start VS Code itself: the e2e stage (test/e2e/run.mjs) is expected to leave its figure in
// test-results/e2e/activation.json, either { "activation_ms": <number> } or { "runs_ms": [<number>, ...] }
// (time from activate() being called to the first command registered), plus where it came from. Without that
// file the figure is null with the reason.
// Usage: node bench/activation.mjs --out=<file> [--from=<path>]
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './lib/args.mjs';
import { single, summarize } from './lib/stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
export const ACTIVATION_FILE = 'test-results/e2e/activation.json';

export function readActivation(path = join(root, ACTIVATION_FILE)) {
  if (!existsSync(path)) {
    return { value: null, reason: `${ACTIVATION_FILE} not found: the e2e stage (npm run test:e2e) does not record activation timing yet` };
  }
  let data;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    return { value: null, reason: `${ACTIVATION_FILE} is not JSON: ${e.message}` };
  }
  const recordedAt = statSync(path).mtime.toISOString();
  const runs = Array.isArray(data?.runs_ms) ? data.runs_ms : undefined;
  if (runs && runs.length > 0 && runs.every((x) => Number.isFinite(x) && x >= 0)) {
    return { ...summarize(runs, 1), runs_ms: runs, source: path, recorded_at: recordedAt, details: data };
  }
  if (Number.isFinite(data?.activation_ms) && data.activation_ms >= 0) {
    return { ...single(data.activation_ms), source: path, recorded_at: recordedAt, details: data };
  }
  return { value: null, reason: `${ACTIVATION_FILE} has neither a non-negative activation_ms nor runs_ms`, details: data };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs();
  const result = readActivation(args.string('from'));
  const out = args.string('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}
