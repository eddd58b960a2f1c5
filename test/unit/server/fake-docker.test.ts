// The fake docker behaves like docker where our code depends on it (without starting tritonserver: the
// "containers" here run a command that is not tritonserver and exit at once, as a missing executable would).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildRunArgs, gpusArg, resolveSettings } from '../../../src/core/server';
import { createFakeDocker } from '../../fake-docker/harness';

function fake(t: { after(fn: () => void): void }) {
  const f = createFakeDocker();
  t.after(() => f.cleanup());
  return f;
}

test('--gpus is parsed as CSV like docker: a multi-id list needs the literal inner quotes', (t) => {
  const f = fake(t);
  const unquoted = f.docker(['run', '-d', '--name', 'g1', '--gpus', 'device=1,2', 'alpine:3', 'true']);
  assert.equal(unquoted.status, 125);
  assert.match(unquoted.stderr, /cannot set both Count and DeviceIDs/);
  const quoted = f.docker(['run', '-d', '--name', 'g2', '--gpus', gpusArg(['1', '2']), 'alpine:3', 'true']);
  assert.equal(quoted.status, 0, quoted.stderr);
  const [c] = JSON.parse(f.docker(['inspect', 'g2']).stdout);
  assert.deepEqual(c.HostConfig.DeviceRequests[0].DeviceIDs, ['1', '2']);
});

test('our full docker run argument list is accepted flag by flag (unknown flags are refused)', (t) => {
  const f = fake(t);
  const bad = f.docker(['run', '-d', '--frobnicate', 'x', 'alpine:3', 'true']);
  assert.equal(bad.status, 125);
  assert.match(bad.stderr, /unknown flag/);
  const s = resolveSettings({ weightsPath: f.stateDir, repositoryPath: f.stateDir, gpuIds: ['0', '1'] });
  // Replace the tritonserver command by one that exits at once: only the docker flags are under test here.
  const args = buildRunArgs(s, 'k');
  const image = args.indexOf(s.image);
  const ok = f.docker([...args.slice(0, image + 1), 'true']);
  assert.equal(ok.status, 0, ok.stderr);
  const [c] = JSON.parse(f.docker(['container', 'inspect', s.containerName]).stdout);
  assert.equal(c.Config.Labels['triton-chatglm.managed'], '1');
  assert.deepEqual(c.HostConfig.PortBindings['8001/tcp'], [{ HostIp: '127.0.0.1', HostPort: '8001' }]);
  assert.deepEqual(c.Mounts.map((m: { Destination: string; RW: boolean }) => [m.Destination, m.RW]), [['/models', false], ['/weights/chatglm3-6b', false]]);
});

test('names are unique (docker\'s Conflict), ps filters by label, rm frees the name', (t) => {
  const f = fake(t);
  assert.equal(f.docker(['run', '-d', '--name', 'n1', '--label', 'x=1', 'alpine:3', 'true']).status, 0);
  const dup = f.docker(['run', '-d', '--name', 'n1', 'alpine:3', 'true']);
  assert.equal(dup.status, 125);
  assert.match(dup.stderr, /Conflict\. The container name "\/n1" is already in use by container "[0-9a-f]{64}"/);
  assert.equal(f.docker(['run', '-d', '--name', 'n2', 'alpine:3', 'true']).status, 0);
  const listed = f.docker(['ps', '-a', '--filter', 'label=x=1', '--format', '{{json .}}']).stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(listed.map((r: { Names: string }) => r.Names), ['n1']);
  assert.equal(f.docker(['ps', '--filter', 'label=x=1', '-q']).stdout.trim(), '', 'exited containers are hidden without -a');
  assert.equal(f.docker(['rm', 'n1']).status, 0);
  assert.equal(f.docker(['run', '-d', '--name', 'n1', 'alpine:3', 'true']).status, 0);
});

test('missing objects and failure modes print docker\'s words and exit codes', (t) => {
  const f = fake(t);
  const nope = f.docker(['container', 'inspect', 'nope']);
  assert.equal(nope.status, 1);
  assert.equal(nope.stdout.trim(), '[]');
  assert.match(nope.stderr, /No such container: nope/);
  assert.match(f.docker(['stop', 'nope']).stderr, /No such container: nope/);
  f.setFail('daemon-down');
  const down = f.docker(['run', '-d', 'alpine:3', 'true']);
  assert.equal(down.status, 125);
  assert.match(down.stderr, /^docker: Cannot connect to the Docker daemon/);
  assert.equal(f.docker(['ps']).status, 1);
  f.setFail('no-nvidia');
  assert.doesNotMatch(f.docker(['info', '--format', '{{json .Runtimes}}']).stdout, /nvidia/);
  const gpu = f.docker(['run', '-d', '--name', 'g3', '--gpus', 'all', 'alpine:3', 'true']);
  assert.equal(gpu.status, 125);
  assert.match(gpu.stderr, /could not select device driver "" with capabilities: \[\[gpu\]\]/);
  const left = JSON.parse(f.docker(['inspect', 'g3']).stdout);
  assert.equal(left[0].State.Status, 'created', 'like docker, the failed container stays in "created"');
});

test('wait returns once the container stopped and prints its exit code; a missing container is docker\'s error', (t) => {
  const f = fake(t);
  assert.equal(f.docker(['run', '-d', '--name', 'w1', 'alpine:3', 'true']).status, 0);
  const waited = f.docker(['container', 'wait', 'w1']);
  assert.equal(waited.status, 0, waited.stderr);
  const [c] = JSON.parse(f.docker(['inspect', 'w1']).stdout);
  assert.equal(c.State.Running, false);
  assert.equal(waited.stdout.trim(), String(c.State.ExitCode));
  const nope = f.docker(['wait', 'nope']);
  assert.equal(nope.status, 1);
  assert.match(nope.stderr, /No such container: nope/);
});
