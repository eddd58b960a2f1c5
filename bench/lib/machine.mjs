// Where the figures came from: CPU, core count, load, runtimes and the thread settings the benchmark pins.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { join } from 'node:path';

/** Thread settings every benchmark child (and tritonserver's Python stub, via triton-process.mjs) runs with. */
export const PINNED_THREADS = Object.freeze({
  OMP_NUM_THREADS: '1',
  OPENBLAS_NUM_THREADS: '1',
  MKL_NUM_THREADS: '1',
  TINY_ENGINE_THREADS: '1',
});

/** The Python the test server's model uses (.venv, which sees the system torch), else python3. */
export function benchPython(projectRoot) {
  const venv = join(projectRoot, '.venv/bin/python');
  return existsSync(venv) ? venv : 'python3';
}

export function describeMachine(projectRoot) {
  const py = spawnSync(benchPython(projectRoot), ['-c', [
    'import json, sys',
    'out = {"python": sys.version.split()[0]}',
    'try:',
    '    import torch; torch.set_num_threads(1); out["torch"] = torch.__version__; out["torch_threads"] = torch.get_num_threads()',
    'except Exception as e: out["torch"] = None; out["torch_error"] = str(e)',
    'try:',
    '    import numpy; out["numpy"] = numpy.__version__',
    'except Exception: out["numpy"] = None',
    'print(json.dumps(out))',
  ].join('\n')], { encoding: 'utf8', env: { ...process.env, ...PINNED_THREADS } });
  let python = { python: null };
  try { python = JSON.parse(py.stdout.trim()); } catch { python = { python: null, error: (py.stderr || py.error?.message || '').slice(0, 300) }; }
  const cpuList = cpus();
  return {
    nproc: cpuList.length,
    cpu_model: cpuList[0]?.model ?? 'unknown',
    memory_gib: +(totalmem() / 2 ** 30).toFixed(1),
    kernel: release(),
    os: osName(),
    node: process.version,
    ...python,
    threads: { ...PINNED_THREADS },
  };
}

/** 1/5/15-minute load averages: on a shared machine they say how much the absolute numbers can be trusted. */
export function loadAverages() {
  return loadavg().map((x) => +x.toFixed(2));
}

function osName() {
  try {
    const text = readFileSync('/etc/os-release', 'utf8');
    return /^PRETTY_NAME="?([^"\n]*)"?/m.exec(text)?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
