// How `docker run` adapts to the host and the daemon (issue #27): the user the server runs as, `--ulimit` only
// where the daemon allows it, CDI devices for podman; the rlimit error classified; the build's failing step named
// for both builders (recorded output of docker.io 20.10's legacy builder and of BuildKit).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BuildStepTracker, buildRunArgs, classifyDockerFailure, containerUser, isPodman, parseRootless, resolveSettings, runEnvironment,
} from '../../../src/core/server';

const settings = resolveSettings({ weightsPath: '/w/chatglm3-6b', repositoryPath: '/r' });
const after = (args: string[], flag: string) => args.filter((_, i) => args[i - 1] === flag);

test('the server runs as the host user on Linux, as root under a rootless daemon, as the image user elsewhere', () => {
  assert.equal(containerUser('linux', { uid: 1234, gid: 999 }, false), '1234:999');
  assert.equal(containerUser('linux', { uid: 1234, gid: 999 }, true), '0:0');
  assert.equal(containerUser('darwin', { uid: 501, gid: 20 }, false), undefined);
  assert.equal(containerUser('win32', undefined, false), undefined);
  const args = buildRunArgs(settings, 'k', runEnvironment(settings, { rootless: false, podman: false }, { uid: 1234, gid: 999 }, 'linux'));
  assert.deepEqual(after(args, '--user'), ['1234:999']);
  assert.ok(after(args, '-e').includes('HOME=/tmp'), 'another user than the image\'s needs a writable HOME');
  const desktop = buildRunArgs(settings, 'k', runEnvironment(settings, { rootless: false, podman: false }, undefined, 'win32'));
  assert.ok(!desktop.includes('--user') && !desktop.includes('HOME=/tmp'));
});

test('--ulimit only when the setting allows it and the daemon is not rootless', () => {
  const ids = { uid: 1, gid: 1 };
  const plain = buildRunArgs(settings, 'k', runEnvironment(settings, { rootless: false, podman: false }, ids, 'linux'));
  assert.deepEqual(after(plain, '--ulimit'), ['memlock=-1', 'stack=67108864']);
  const rootless = buildRunArgs(settings, 'k', runEnvironment(settings, { rootless: true, podman: false }, ids, 'linux'));
  assert.deepEqual(after(rootless, '--ulimit'), []);
  const off = { ...settings, raiseUlimits: false };
  assert.deepEqual(after(buildRunArgs(off, 'k', runEnvironment(off, { rootless: false, podman: false }, ids, 'linux')), '--ulimit'), []);
  assert.deepEqual(after(buildRunArgs(off, 'k'), '--ulimit'), [], 'the setting alone, without a detected environment');
});

test('podman gets CDI devices instead of --gpus', () => {
  assert.equal(isPodman('podman'), true);
  assert.equal(isPodman('/usr/bin/podman'), true);
  assert.equal(isPodman('C:\\Program Files\\RedHat\\Podman\\podman.exe'), true);
  assert.equal(isPodman('/usr/bin/docker'), false);
  const env = runEnvironment(settings, { rootless: false, podman: true }, { uid: 1, gid: 1 }, 'linux');
  const all = buildRunArgs(settings, 'k', env);
  assert.ok(!all.includes('--gpus'));
  assert.deepEqual(after(all, '--device'), ['nvidia.com/gpu=all']);
  const two = { ...settings, gpuIds: ['0', 'GPU-abc'] };
  assert.deepEqual(after(buildRunArgs(two, 'k', env), '--device'), ['nvidia.com/gpu=0', 'nvidia.com/gpu=GPU-abc']);
});

test('rootless is read from docker info security options (and podman\'s own field)', () => {
  assert.equal(parseRootless('["name=seccomp,profile=default","name=rootless","name=cgroupns"]', false), true);
  assert.equal(parseRootless('["name=apparmor","name=seccomp,profile=builtin"]', false), false);
  assert.equal(parseRootless('template: :1:7: executing "" at <.SecurityOptions>: map has no entry', false), false);
  assert.equal(parseRootless('true', true), true);
  assert.equal(parseRootless('false', true), false);
});

test('runc\'s rlimit error is ulimit-denied, with the setting as its fix', () => {
  for (const stderr of [
    'docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container process caused: process_linux.go:545: container init caused: error setting rlimit type 8: operation not permitted: unknown.',
    'docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting rlimit type 8: operation not permitted: unknown.',
  ]) {
    const e = classifyDockerFailure({ exitCode: 125, stderr });
    assert.equal(e.code, 'ulimit-denied');
    assert.match(e.fix, /tritonChatglm\.raiseUlimits/);
  }
});

const LEGACY_FAIL = `Sending build context to Docker daemon  12.29kB
Step 1/8 : FROM nvcr.io/nvidia/tritonserver:24.10-py3
 ---> 5b1d3c0b2a4e
Step 2/8 : ENV PIP_NO_CACHE_DIR=1
 ---> Using cache
 ---> 0d6c3d1e8f2a
Step 3/8 : COPY requirements-serving.txt /tmp/requirements-serving.txt
 ---> 7a9e5b2c1d3f
Step 4/8 : RUN python3 -m pip install -r /tmp/requirements-serving.txt && rm /tmp/requirements-serving.txt
 ---> Running in 9c2b7e4f1a6d
ERROR: Could not find a version that satisfies the requirement transformers==9.9.9
The command '/bin/sh -c python3 -m pip install -r /tmp/requirements-serving.txt && rm /tmp/requirements-serving.txt' returned a non-zero code: 1`;

const BUILDKIT_FAIL = `#0 building with "default" instance using docker driver
#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 1.02kB done
#1 DONE 0.0s
#5 [1/4] FROM nvcr.io/nvidia/tritonserver:24.10-py3
#5 CACHED
#6 [2/4] COPY requirements-serving.txt /tmp/requirements-serving.txt
#6 DONE 0.1s
#7 [3/4] RUN python3 -m pip install -r /tmp/requirements-serving.txt
#7 1.934 ERROR: Could not find a version that satisfies the requirement transformers==9.9.9
#7 ERROR: process "/bin/sh -c python3 -m pip install -r /tmp/requirements-serving.txt" did not complete successfully: exit code: 1
------
 > [3/4] RUN python3 -m pip install -r /tmp/requirements-serving.txt:
1.934 ERROR: Could not find a version that satisfies the requirement transformers==9.9.9
------
ERROR: failed to solve: process "/bin/sh -c python3 -m pip install -r /tmp/requirements-serving.txt" did not complete successfully: exit code: 1`;

test('the failing build step is named for the legacy builder and for BuildKit', () => {
  const read = (log: string) => {
    const t = new BuildStepTracker();
    for (const line of log.split('\n')) t.push(line);
    return t.failedStep();
  };
  assert.equal(read(LEGACY_FAIL), 'Step 4/8 : RUN python3 -m pip install -r /tmp/requirements-serving.txt && rm /tmp/requirements-serving.txt');
  assert.equal(read(BUILDKIT_FAIL), '[3/4] RUN python3 -m pip install -r /tmp/requirements-serving.txt');
  assert.equal(read('#9 [builder 2/5] RUN make\n#9 ERROR: process "/bin/sh -c make" did not complete successfully: exit code: 2'), '[builder 2/5] RUN make');
  assert.equal(read('ERROR [2/3] RUN false\nERROR: failed to solve'), '[2/3] RUN false');
});
