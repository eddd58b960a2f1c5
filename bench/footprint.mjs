#!/usr/bin/env node
// Footprint: packages the extension the way it is published (`npm run package`: production esbuild bundles, then
// vsce → dist/triton-chatglm.vsix) and reports the sizes, plus the largest files inside the .vsix so a jump in
// size points at its cause.
// Usage: node bench/footprint.mjs --out=<file> [--no-package]  (--no-package measures the existing dist/ files)
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './lib/args.mjs';
import { single } from './lib/stats.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
export const VSIX_LIMIT_BYTES = 2 * 1024 * 1024;

export function measureFootprint({ runPackage = true } = {}) {
  let packageMs = null;
  if (runPackage) {
    const t0 = performance.now();
    const r = spawnSync('npm', ['run', '-s', 'package'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
    packageMs = Math.round(performance.now() - t0);
    if (r.status !== 0) throw new Error(`npm run package failed (exit ${r.status}):\n${`${r.stdout}${r.stderr}`.slice(-3000)}`);
  }
  const files = { vsix: 'dist/triton-chatglm.vsix', extension: 'dist/extension.js', webview: 'dist/webview.js' };
  const figure = (rel) => {
    const path = join(root, rel);
    if (existsSync(path)) return { ...single(statSync(path).size), file: rel };
    if (runPackage) throw new Error(`${rel} does not exist after npm run package`);
    return { value: null, median_of: 0, min: null, max: null, file: rel, reason: `${rel} does not exist (measured with --no-package)` };
  };
  const vsix = figure(files.vsix);
  return {
    vsix_bytes: { ...vsix, target_max: VSIX_LIMIT_BYTES },
    extension_bundle_bytes: figure(files.extension),
    webview_bundle_bytes: figure(files.webview),
    package_ms: packageMs,
    largest_vsix_entries: vsix.value === null ? null : largestEntries(join(root, files.vsix), 12),
  };
}

/** The biggest entries of the .vsix (a zip), read with Python's zipfile (no unzip tool needed). */
function largestEntries(vsix, n) {
  const code = [
    'import json, sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'rows = sorted(((i.filename, i.file_size, i.compress_size) for i in z.infolist()), key=lambda r: -r[1])',
    'print(json.dumps({"entries": len(rows), "largest": [{"path": p, "bytes": s, "compressed": c} for p, s, c in rows[:int(sys.argv[2])]]}))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', code, vsix, String(n)], { encoding: 'utf8' });
  if (r.status !== 0) return { error: (r.stderr || r.error?.message || 'python3 failed').slice(0, 300) };
  return JSON.parse(r.stdout);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = parseArgs();
  const result = measureFootprint({ runPackage: !args.has('no-package') });
  const out = args.string('out');
  if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  else console.log(JSON.stringify(result, null, 2));
}
