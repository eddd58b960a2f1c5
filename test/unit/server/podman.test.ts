// Podman as `tritonChatglm.dockerPath` (issue #27, item 7). Debian's podman 4.3.1 runs on the test machine: what it
// printed for our own `run` arguments (with `--ulimit nofile/nproc` this sandbox needs, no GPU) is recorded in
// recorded/, and a stand-in `podman` replays it, so the container layer is checked against podman's formats.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { classifyDockerFailure, ContainerManager, daemonFacts, DockerCli, resolveSettings } from '../../../src/core/server';

const inspectFile = join(__dirname, 'recorded/podman-4.3.1-inspect.json');
const id = (JSON.parse(readFileSync(inspectFile, 'utf8')) as { Id: string }[])[0]!.Id;

/** A `podman` that answers like podman 4.3.1 did: `ps --format '{{json .}}'` is one pretty-printed array. */
function stubPodman(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'podman-stub-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'podman');
  writeFileSync(bin, `#!/usr/bin/env node
const args = process.argv.slice(2);
const fs = require('node:fs');
if (args[0] === 'ps') {
  const format = args[args.indexOf('--format') + 1];
  if (format === '{{.ID}}') console.log(${JSON.stringify(id)});
  else console.log(JSON.stringify([{ Id: ${JSON.stringify(id)}, Names: ['pm-chatglm'], State: 'running' }], null, 2));
} else if (args[0] === 'container' && args[1] === 'inspect') {
  process.stdout.write(fs.readFileSync(${JSON.stringify(inspectFile)}, 'utf8'));
} else if (args[0] === 'info' && args.includes('{{json .Host.Security.Rootless}}')) {
  console.log('false');
} else if (args[0] === 'info') {
  console.error('Error: template: info:1:7: executing "info" at <.Runtimes>: can\\'t evaluate field Runtimes in type *define.Info');
  process.exit(125);
} else { console.error('Error: unrecognized command'); process.exit(125); }
`);
  chmodSync(bin, 0o755);
  return bin;
}

test('podman: our container is found by label and re-attached from podman\'s own ps and inspect output', async (t) => {
  const podman = stubPodman(t);
  const m = new ContainerManager(resolveSettings({ dockerPath: podman, weightsPath: '/tmp/pmroot', repositoryPath: '/tmp/pmroot/bin', containerName: 'other-name' }));
  const listed = await m.listManaged();
  assert.equal(listed.length, 1);
  assert.equal(listed[0]!.name, 'pm-chatglm');
  assert.deepEqual(listed[0]!.ports, { http: 18501, grpc: 18502, metrics: 18503 });
  assert.equal(listed[0]!.running, true);
  assert.deepEqual(await daemonFacts(new DockerCli(podman)), { podman: true, rootless: false });
});

test('podman without the NVIDIA CDI spec: its run error is nvidia-runtime-missing with the CDI fix', () => {
  const e = classifyDockerFailure({ exitCode: 126, stderr: 'Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all' });
  assert.equal(e.code, 'nvidia-runtime-missing');
  assert.match(e.fix, /nvidia-ctk cdi generate/);
});
