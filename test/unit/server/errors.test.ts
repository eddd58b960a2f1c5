import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyDockerFailure, containerExitedError, type ServerErrorCode } from '../../../src/core/server';

// Real docker CLI / daemon messages (Docker 24-28), as printed on stderr.
const cases: { code: ServerErrorCode; stderr: string; exitCode: number }[] = [
  { code: 'daemon-unreachable', exitCode: 1, stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' },
  { code: 'daemon-unreachable', exitCode: 125, stderr: "docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n\nRun 'docker run --help' for more information" },
  { code: 'daemon-unreachable', exitCode: 1, stderr: 'error during connect: Get "http://%2F%2F.%2Fpipe%2FdockerDesktopLinuxEngine/v1.47/containers/json": open //./pipe/dockerDesktopLinuxEngine: The system cannot find the file specified.' },
  { code: 'permission-denied', exitCode: 1, stderr: 'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.47/containers/json": dial unix /var/run/docker.sock: connect: permission denied' },
  { code: 'permission-denied', exitCode: 126, stderr: 'docker: permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Head "http://%2Fvar%2Frun%2Fdocker.sock/_ping": dial unix /var/run/docker.sock: connect: permission denied.\nSee \'docker run --help\'.' },
  { code: 'nvidia-runtime-missing', exitCode: 125, stderr: 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].' },
  { code: 'nvidia-runtime-missing', exitCode: 125, stderr: 'docker: Error response from daemon: unknown or invalid runtime name: nvidia.' },
  { code: 'nvidia-runtime-missing', exitCode: 125, stderr: 'docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as \'legacy\'\nnvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.' },
  { code: 'image-missing', exitCode: 125, stderr: "Unable to find image 'triton-chatglm:24.10' locally\ndocker: Error response from daemon: pull access denied for triton-chatglm, repository does not exist or may require 'docker login': denied: requested access to the resource is denied.\nSee 'docker run --help'." },
  { code: 'image-missing', exitCode: 125, stderr: 'docker: Error response from daemon: No such image: triton-chatglm:24.10.' },
  { code: 'image-missing', exitCode: 1, stderr: 'Error response from daemon: No such image: triton-chatglm:24.10' },
  { code: 'image-missing', exitCode: 1, stderr: 'Error: No such image: triton-chatglm:24.10' },
  { code: 'port-allocated', exitCode: 125, stderr: 'docker: Error response from daemon: driver failed programming external connectivity on endpoint triton-chatglm3 (4b7c1e0a9f1d): Bind for 127.0.0.1:8000 failed: port is already allocated.' },
  { code: 'port-allocated', exitCode: 125, stderr: 'docker: Error response from daemon: failed to set up container networking: driver failed programming external connectivity on endpoint triton-chatglm3 (9d1e): failed to bind host port for 127.0.0.1:8001:172.17.0.2:8001/tcp: address already in use.' },
  { code: 'port-allocated', exitCode: 125, stderr: 'docker: Error response from daemon: driver failed programming external connectivity on endpoint triton-chatglm3 (ab12): Error starting userland proxy: listen tcp4 127.0.0.1:8002: bind: address already in use.' },
  { code: 'port-allocated', exitCode: 125, stderr: 'docker: Error response from daemon: Ports are not available: exposing port TCP 127.0.0.1:8000 -> 0.0.0.0:0: listen tcp 127.0.0.1:8000: bind: Only one usage of each socket address (protocol/network address/port) is normally permitted.' },
  { code: 'name-conflict', exitCode: 125, stderr: 'docker: Error response from daemon: Conflict. The container name "/triton-chatglm3" is already in use by container "3f9b0c1d2e". You have to remove (or rename) that container to be able to reuse that name.\nSee \'docker run --help\'.' },
  { code: 'unknown', exitCode: 125, stderr: 'docker: Error response from daemon: invalid mount config for type "bind": bind source path does not exist: /nope.' },
  { code: 'unknown', exitCode: 1, stderr: '' },
];

for (const c of cases) {
  test(`${c.code}: ${c.stderr.slice(0, 70).replace(/\n/g, ' ')}`, () => {
    const e = classifyDockerFailure({ stderr: c.stderr, exitCode: c.exitCode });
    assert.equal(e.code, c.code);
    assert.ok(e.message.length > 10, 'has an English message');
    assert.ok(e.fix.length > 10, 'has a fix');
    if (c.stderr) assert.equal(e.detail, c.stderr.trim(), 'keeps docker\'s words as detail');
  });
}

test('docker-missing when the binary cannot be spawned (ENOENT), naming the path', () => {
  const e = classifyDockerFailure({ errno: 'ENOENT', stderr: '', dockerPath: '/opt/bin/docker' });
  assert.equal(e.code, 'docker-missing');
  assert.match(e.message, /\/opt\/bin\/docker/);
});

test('port-allocated names the port from docker\'s text', () => {
  const e = classifyDockerFailure({ exitCode: 125, stderr: 'docker: Error response from daemon: driver failed programming external connectivity on endpoint x (1): Bind for 127.0.0.1:18001 failed: port is already allocated.' });
  assert.match(e.message, /18001/);
});

test('unknown errors quote docker\'s first line and the exit code', () => {
  const e = classifyDockerFailure({ exitCode: 125, stderr: '\nsomething odd happened\nmore' });
  assert.match(e.message, /exit code 125/);
  assert.match(e.message, /something odd happened/);
});

test('container-exited carries the last log lines and explains 137', () => {
  const e = containerExitedError(137, ['line a', 'Killed']);
  assert.equal(e.code, 'container-exited');
  assert.deepEqual(e.logTail, ['line a', 'Killed']);
  assert.match(e.message, /137/);
  assert.match(e.detail ?? '', /Killed/);
});
