#!/usr/bin/env node
// `npm run bench`: measures the whole product side by side in one run and writes bench/results/latest.json, the
// concurrency-curve SVG and the figures section of bench/README.md. Parts run one at a time, each in its own
// process (so one failing part is reported and the others still run): the server batching bench, the
// concurrency curve, the client benches (explain fan-out, time to first delta, client overhead), the chat panel
// render cost, the package footprint and the activation time recorded by the e2e suite.
//
// Usage: node bench/run-all.mjs [--quick | --smoke] [--only=curve,client,...] [--skip=...] [--out=<file>]
//   --only keeps the figures of the parts it does not run from the existing result file (marked `kept_from`).
//                               [--no-readme] [--silent] [--part-timeout-s=N]
//   (full)    about 10 minutes; writes bench/results/latest.json, bench/results/concurrency.svg, README section
//   --quick   a few minutes, fewer rounds and shorter answers; writes bench/results/quick.json (+ quick SVG)
//   --smoke   seconds of work per part with tiny sizes, for test/bench (the bench stage of npm test; needs --out)
// Benchmarks report figures and targets; they do not fail on a missed target. Exit status 1 = a part failed.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './lib/args.mjs';
import { composeResults, TARGETS } from './lib/compose.mjs';
import { describeMachine, loadAverages, PINNED_THREADS } from './lib/machine.mjs';
import { keepFiguresNotRun } from './lib/merge.mjs';
import { MODES, partCommand, PART_NAMES } from './lib/parts.mjs';
import { resultsMarkdown, updateReadme } from './lib/report.mjs';
import { concurrencyCurveSvg } from './lib/svg-chart.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

async function main() {
  const args = parseArgs();
  const known = new Set(['quick', 'smoke', 'only', 'skip', 'out', 'no-readme', 'silent', 'part-timeout-s']);
  const unknown = args.names().filter((n) => !known.has(n));
  if (unknown.length) throw new Error(`unknown option(s): ${unknown.map((n) => `--${n}`).join(', ')}`);
  if (args.has('quick') && args.has('smoke')) throw new Error('--quick and --smoke exclude each other');
  const mode = args.has('smoke') ? 'smoke' : args.has('quick') ? 'quick' : 'full';
  const list = (name) => (args.has(name) ? args.string(name).split(',').filter(Boolean) : undefined);
  const only = list('only');
  const skip = list('skip') ?? [];
  for (const n of [...(only ?? []), ...skip]) if (!PART_NAMES.includes(n)) throw new Error(`unknown part '${n}' (parts: ${PART_NAMES.join(', ')})`);
  const parts = (only ?? PART_NAMES).filter((n) => !skip.includes(n) && !(n === 'server' && !MODES[mode].serverBench));

  const defaultOut = { full: 'bench/results/latest.json', quick: 'bench/results/quick.json' }[mode];
  const outArg = args.string('out', defaultOut);
  if (!outArg) throw new Error('--smoke needs --out=<file> (it must not overwrite the committed results)');
  const outFile = resolve(root, outArg);
  const svgFile = join(dirname(outFile), mode === 'full' ? 'concurrency.svg' : `${basename(outFile, '.json')}-concurrency.svg`);
  const silent = args.has('silent');
  const say = (line) => { if (!silent) console.log(line); };

  // Threads pinned for this process and, through the environment, every part and every tritonserver it starts.
  Object.assign(process.env, PINNED_THREADS);
  const runId = randomUUID();
  process.env.BENCH_RUN_ID = runId;
  let tmp;
  const onSignal = (sig) => {
    console.error(`\n${sig}: stopping the benchmark and every process it started`);
    killRunProcesses(runId);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const startedAt = new Date();
  const machine = describeMachine(root);
  const loadStart = loadAverages();
  say(`bench (${mode}): ${parts.join(', ')} on ${machine.nproc} × ${machine.cpu_model}, load ${loadStart.join(' ')}`);
  tmp = mkdtempSync(join(tmpdir(), 'bench-run-'));
  process.env.BENCH_TMP_DIR = tmp;
  const results = {};
  try {
    for (const name of parts) {
      const partOut = join(tmp, `${name}.json`);
      const cmd = partCommand(name, mode, partOut, process.execPath);
      if (args.has('part-timeout-s')) cmd.timeoutMs = args.int('part-timeout-s', 1) * 1000;
      say(`\n=== ${name}: ${cmd.argv.slice(1).join(' ')}`);
      const t0 = Date.now();
      const run = await runPart(cmd, { silent, runId });
      const seconds = ((Date.now() - t0) / 1000).toFixed(0);
      if (run.code !== 0) {
        results[name] = { ok: false, error: `${run.timedOut ? `timed out after ${cmd.timeoutMs / 1000} s` : `exit ${run.code}`}: ${run.tail.trim().split('\n').slice(-6).join(' | ')}` };
        say(`--- ${name} FAILED after ${seconds} s`);
        continue;
      }
      try {
        const file = cmd.writes ? join(root, cmd.writes) : partOut;
        if (cmd.writes && statSync(file).mtimeMs < t0) throw new Error(`${cmd.writes} was not rewritten by this run`);
        results[name] = { ok: true, result: JSON.parse(readFileSync(file, 'utf8')) };
        say(`--- ${name} done in ${seconds} s`);
      } catch (e) {
        results[name] = { ok: false, error: `no readable result: ${e.message}` };
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  let latest = composeResults({
    parts: results, machine, mode, startedAt, finishedAt: new Date(), loadAverage: { start: loadStart, end: loadAverages() },
  });
  if (only && existsSync(outFile)) latest = keepFiguresNotRun(latest, JSON.parse(readFileSync(outFile, 'utf8')));
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, `${JSON.stringify(latest, null, 2)}\n`);
  const caption = `Test tritonserver ${latest.concurrency_curve.server_version ?? ''} on CPU (tiny engine), ${machine.nproc} cores, ${latest.generated_at.slice(0, 16)}Z; bars: min–max of the rounds`;
  if (latest.concurrency_curve.configurations && !latest.concurrency_curve.kept_from) writeFileSync(svgFile, concurrencyCurveSvg(latest.concurrency_curve, caption));
  if (mode === 'full' && !args.has('no-readme') && parts.length === PART_NAMES.length) {
    updateReadme(join(root, 'bench/README.md'), resultsMarkdown(latest, basename(svgFile)));
  }

  say('\nfigure                      value        target     met');
  for (const key of Object.keys(TARGETS)) {
    const e = latest[key];
    const t = TARGETS[key];
    say(`${key.padEnd(27)} ${String(e.value ?? 'null').padEnd(12)} ${t.op ? `${t.op} ${t.value}` : 'recorded'}`.padEnd(52) + ` ${e.met === null ? '' : e.met ? 'yes' : 'NO'}`);
  }
  say(`\nwrote ${outFile}${latest.concurrency_curve.configurations ? ` and ${svgFile}` : ''}`);
  const failed = Object.keys(latest.errors);
  if (failed.length) console.error(`parts that failed: ${failed.join(', ')}`);
  return failed.length ? 1 : 0;
}

/** Runs one part; output is passed through (unless silent) and its tail kept for the error message. */
function runPart(cmd, { silent, runId }) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd.argv[0], cmd.argv.slice(1), { cwd: root, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (d) => {
      tail = (tail + d).slice(-4000);
      if (!silent) process.stdout.write(d);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killRunProcesses(runId); // the part itself and any tritonserver / Chromium it started
    }, cmd.timeoutMs);
    child.on('error', (e) => { keep(String(e)); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), timedOut, tail });
    });
  });
}

/**
 * Ends every process that carries this run's BENCH_RUN_ID in its environment (the parts inherit it, and so do the
 * tritonservers and browsers they start), never anything else.
 */
function killRunProcesses(runId) {
  const marker = Buffer.from(`BENCH_RUN_ID=${runId}\0`);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`);
      if (env.includes(marker)) process.kill(Number(entry), 'SIGKILL');
    } catch { /* gone, or not ours to read */ }
  }
}

main().then((code) => { process.exitCode = code; }, (e) => { console.error(e?.message ?? e); process.exitCode = 2; });
