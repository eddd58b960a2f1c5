// A benchmark that is interrupted must not leave its tritonserver or the server's Python backend stub running
// (an orphaned triton_python_backend_stub was once left behind): bench/lib/test-servers.mjs kills the process
// group of every server it started when the bench process ends, on SIGINT / SIGTERM too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = resolve(__dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Processes whose process group is `pgid` (field 5 of /proc/PID/stat, after the command name). */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) members.push(Number(entry));
    } catch { /* gone */ }
  }
  return members;
}

// Needs the tritonserver of scripts/setup-python.sh, like the other bench tests.
for (const ending of ['SIGTERM', 'SIGINT', 'an uncaught error'] as const) {
  test(`a bench ended by ${ending} leaves no tritonserver or backend stub behind`, { timeout: 180_000 }, async () => {
    const lib = pathToFileURL(resolve(root, 'bench/lib/test-servers.mjs')).href;
    const script = `
      import { startBenchServer } from ${JSON.stringify(lib)};
      const server = await startBenchServer({ label: 'teardown', maxBatchSize: 2 });
      process.stdout.write(JSON.stringify({ url: server.url }) + '\\n');
      process.stdin.on('data', () => { throw new Error('the bench failed'); });
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    let pgid = 0;
    try {
      for (const deadline = Date.now() + 150_000; !out.includes('\n'); await sleep(100)) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `the bench server did not start:\n${err}`);
      }
      const { url } = JSON.parse(out) as { url: string };
      // The server listening on that port is the group leader; its loaded model runs in a stub of the same group.
      pgid = tritonPidListeningOn(Number(new URL(url).port));
      assert.ok(groupMembers(pgid).length >= 2, 'tritonserver and its Python backend stub run in one process group');
      if (ending === 'an uncaught error') child.stdin.write('fail\n');
      else child.kill(ending);
      await exited;
      for (const deadline = Date.now() + 30_000; groupMembers(pgid).length > 0 && Date.now() < deadline;) await sleep(100);
      assert.deepEqual(groupMembers(pgid), [], 'every process of the server\'s group is gone');
    } finally {
      child.kill('SIGKILL');
      if (pgid) try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
}

/** The tritonserver process whose command line names this HTTP port. */
function tritonPidListeningOn(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd[0]?.endsWith('tritonserver') && cmd.includes(`--http-port=${port}`)) return Number(entry);
    } catch { /* gone */ }
  }
  throw new Error(`no tritonserver with --http-port=${port}`);
}
