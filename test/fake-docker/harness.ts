// Test helpers around the fake docker: a private state directory per test, failure modes, a valid-looking
// ChatGLM3 checkpoint, and a cleanup that removes every container (and so kills every tritonserver) it started.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { catalogConfigJson } from '../support/catalogConfig';

export const fakeDockerPath = resolve(__dirname, 'docker');
/**
 * The fake host's own programs: a stub of the NVIDIA toolkit's `nvidia-container-runtime-hook`, which the preflight
 * looks for on the PATH (the fake, like most real hosts, lists no "nvidia" runtime).
 */
export const fakeHostBin = resolve(__dirname, 'bin');
export const pathWithFakeHost = (path = process.env.PATH) => [fakeHostBin, path].filter(Boolean).join(delimiter);
export const projectRoot = resolve(__dirname, '../..');

export type FakeDockerFailMode = 'daemon-down' | 'no-nvidia' | 'port-allocated' | 'image-missing' | 'permission-denied' | 'no-buildx' | 'no-memlock' | 'rootless';

export interface FakeDocker {
  dockerPath: string;
  stateDir: string;
  /** Environment for processes that should talk to this fake daemon. */
  env: NodeJS.ProcessEnv;
  /** Makes every later docker call fail this way (undefined: back to normal). */
  setFail(mode: FakeDockerFailMode | undefined): void;
  /** Runs the fake docker synchronously (for assertions about its state). */
  docker(args: string[]): { status: number | null; stdout: string; stderr: string };
  /** Ids of all containers, running or not. */
  containerIds(): string[];
  /** Removes every container (killing its tritonserver) and the state directory. */
  cleanup(): void;
}

export function createFakeDocker(env: NodeJS.ProcessEnv = {}): FakeDocker {
  const stateDir = mkdtempSync(join(tmpdir(), 'fake-docker-'));
  const fullEnv = { ...process.env, PATH: pathWithFakeHost(), ...env, FAKE_DOCKER_STATE: stateDir, FAKE_DOCKER_FAIL: '' };
  const docker = (args: string[]) => {
    const r = spawnSync(fakeDockerPath, args, { env: fullEnv, encoding: 'utf8', timeout: 120_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const containerIds = () => {
    try {
      return readdirSync(join(stateDir, 'containers')).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
    } catch {
      return [];
    }
  };
  return {
    dockerPath: fakeDockerPath,
    stateDir,
    env: fullEnv,
    setFail(mode) {
      if (mode) writeFileSync(join(stateDir, 'fail'), mode);
      else rmSync(join(stateDir, 'fail'), { force: true });
    },
    docker,
    containerIds,
    cleanup() {
      rmSync(join(stateDir, 'fail'), { force: true });
      const ids = containerIds();
      if (ids.length) docker(['rm', '-f', ...ids]);
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** A directory that passes the ChatGLM3 checkpoint checks (the tiny engine never reads it). */
export function makeFakeWeights(parent: string): string {
  const dir = join(parent, 'chatglm3-6b');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(catalogConfigJson('chatglm3-6b')));
  writeFileSync(join(dir, 'tokenizer.model'), 'stand-in');
  writeFileSync(join(dir, 'model-00001-of-00001.safetensors'), 'stand-in');
  return dir;
}

const handedOut = new Set<number>();

/**
 * A loopback port that was free a moment ago and that this process has not handed out before: asked for several
 * times in a row (http, grpc, metrics), the OS can return a port it just returned, and tritonserver then refuses
 * to start.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolvePort, reject) => {
      const srv = createServer();
      srv.unref();
      srv.on('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const addr = srv.address();
        const chosen = typeof addr === 'object' && addr ? addr.port : 0;
        srv.close(() => resolvePort(chosen));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
