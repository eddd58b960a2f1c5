#!/usr/bin/env node
// `npm test`: runs every test stage in order, each writing JUnit XML into test-results/, then prints one
// closing line counted from those files: "N passed, N failed, N skipped". A stage that crashes without
// writing results counts as a failure. `node test/run-all.mjs unit python` runs only the named stages.
// Before running anything it checks what the selected stages need (`needs`, see scripts/test-prerequisites.mjs)
// and stops with one line naming what is missing and how to install it; `--check` does only that.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkStages } from '../scripts/test-prerequisites.mjs';

const root = new URL('..', import.meta.url).pathname;
// Every stage runs with one BLAS/OpenMP thread, as CI does: timings stay comparable on a shared machine.
for (const v of ['OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS']) process.env[v] ??= '1';
const results = join(root, 'test-results');
const py = join(root, '.venv/bin/python');

function findTests(dir, suffix) {
  const out = [];
  const walk = (d) => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(suffix)) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out;
}

/** A node:test stage over TypeScript files (run through tsx), reported as spec on stdout and JUnit on disk. */
function nodeTestStage(name, dir, needs, extraEnv = {}) {
  return {
    name,
    needs,
    run() {
      const files = findTests(dir, '.test.ts');
      if (files.length === 0) return { status: 0, empty: true };
      return spawnSync(process.execPath, [
        '--import', 'tsx', '--test', '--test-concurrency=1',
        '--test-reporter=spec', '--test-reporter-destination=stdout',
        '--test-reporter=junit', `--test-reporter-destination=${join(results, `${name}.xml`)}`,
        ...files,
      ], { cwd: root, stdio: 'inherit', env: { ...process.env, ...extraEnv } });
    },
  };
}

// `needs`: the prerequisites (scripts/test-prerequisites.mjs) a stage cannot run without. `unit` needs nothing
// but node_modules: no tritonserver, no Python, no browser, no network.
const stages = [
  { name: 'lint', needs: ['node-modules'], run: () => spawnSync('npm', ['run', '-s', 'lint'], { cwd: root, stdio: 'inherit' }), noResults: true },
  { name: 'build', needs: ['node-modules'], run: () => spawnSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: 'inherit' }), noResults: true },
  nodeTestStage('unit', 'test/unit', ['node-modules']),
  {
    name: 'python',
    needs: ['python-env'],
    run() {
      return spawnSync(py, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', `--junitxml=${join(results, 'python.xml')}`, 'triton/tests'], {
        cwd: root, stdio: 'inherit',
      });
    },
  },
  nodeTestStage('integration', 'test/integration', ['node-modules', 'python-env']),
  nodeTestStage('reliability', 'test/reliability', ['node-modules', 'python-env', 'chromium']),
  nodeTestStage('webview', 'test/webview', ['node-modules', 'chromium']),
  {
    name: 'e2e',
    needs: ['node-modules', 'python-env', 'chromium', 'code-server', 'cjk-fonts'],
    run() {
      const runner = join(root, 'test/e2e/run.mjs');
      if (!existsSync(runner)) return { status: 0, empty: true };
      return spawnSync(process.execPath, [runner, `--junit=${join(results, 'e2e.xml')}`], { cwd: root, stdio: 'inherit' });
    },
  },
  // The container lifecycle and its faults on a real Docker Engine: a private dockerd and a CPU serving image
  // (test/docker/README.md), then the extension's journeys in code-server on the same daemon; the runner starts
  // and stops the daemon around them.
  {
    name: 'docker',
    needs: ['node-modules', 'python-env', 'docker-engine', 'chromium', 'code-server'],
    run: () => spawnSync(process.execPath, [join(root, 'test/docker/run-stage.mjs'), `--junit=${join(results, 'docker.xml')}`], { cwd: root, stdio: 'inherit' }),
  },
  // The benchmarks run end to end with tiny sizes (real tritonserver, Chromium): they cannot rot unnoticed.
  nodeTestStage('bench', 'test/bench', ['node-modules', 'python-env', 'chromium']),
];

const checkOnly = process.argv.includes('--check');
const wanted = process.argv.slice(2).filter((a) => a !== '--check');
const selected = wanted.length ? stages.filter((s) => wanted.includes(s.name)) : stages;
if (wanted.length && selected.length !== wanted.length) {
  console.error(`unknown stage in ${wanted.join(', ')}; stages: ${stages.map((s) => s.name).join(', ')}`);
  process.exit(2);
}

const preflight = checkStages(selected);
for (const w of preflight.warnings) console.error(w);
if (preflight.line) {
  console.error(preflight.line);
  process.exit(1);
}
if (checkOnly) {
  console.log(`every prerequisite of ${selected.map((s) => s.name).join(', ')} is present`);
  process.exit(0);
}

mkdirSync(results, { recursive: true });
for (const s of selected) rmSync(join(results, `${s.name}.xml`), { force: true });

let passed = 0, failed = 0, skipped = 0;
const failedStages = [];
for (const stage of selected) {
  const started = Date.now();
  console.log(`\n=== stage: ${stage.name}`);
  const r = stage.run();
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  const xml = join(results, `${stage.name}.xml`);
  if (r.status !== 0) failedStages.push(stage.name);
  if (stage.noResults || r.empty) {
    console.log(`=== ${stage.name}: ${r.status === 0 ? (r.empty ? 'no tests' : 'ok') : 'FAILED'} (${secs} s)`);
    continue;
  }
  if (!existsSync(xml)) { failed += 1; console.log(`=== ${stage.name}: no results written (exit ${r.status})`); continue; }
  const c = countJUnit(readFileSync(xml, 'utf8'));
  passed += c.passed; failed += c.failed; skipped += c.skipped;
  if (r.status !== 0 && c.failed === 0) failed += 1; // crashed after writing partial results
  console.log(`=== ${stage.name}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped (${secs} s)`);
}

if (failedStages.length) console.log(`\nfailed stages: ${failedStages.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedStages.length || failed ? 1 : 0);

/**
 * Counts leaf <testcase> elements; a testcase with <failure>/<error> failed, with <skipped> was skipped. Attribute
 * values are skipped as quoted strings: node's reporter leaves `>` unescaped in names ("targets: >= and <= ...").
 */
function countJUnit(text) {
  let p = 0, f = 0, s = 0;
  const re = /<testcase\b(?:[^>"]|"[^"]*")*?(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of text.matchAll(re)) {
    const body = m[2] ?? '';
    if (/<(failure|error)\b/.test(body)) f += 1;
    else if (/<skipped\b/.test(body)) s += 1;
    else p += 1;
  }
  return { passed: p, failed: f, skipped: s };
}
