// Test helpers of the docker stage: the private daemon (test/docker/daemon.mjs) and the CPU serving image
// (test/docker/image.mjs), the built CLI, and a cleanup that removes every container a test made. The stage
// runner (test/docker/run-stage.mjs) starts the daemon once for all files; a file run alone starts it itself
// and stops it when it is done.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { catalogConfigJson } from '../support/catalogConfig';

export const projectRoot = resolve(__dirname, '../..');
export const cliPath = join(projectRoot, 'dist/cli.js');

interface Client { path: string; env: NodeJS.ProcessEnv }
interface DaemonModule {
  stateDir(): string;
  client(dir?: string): Client;
  startDaemon(o?: { dir?: string; nvidiaRuntime?: boolean }): Promise<Client>;
  stopDaemon(dir?: string): Promise<void>;
  removeAllContainers(c?: Client): number;
}
interface ImageModule { ensureImage(docker: Client, stateDir: string, log?: (l: string) => void): string }

const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(__dirname, file)).href)) as T;

export interface DockerRun { status: number | null; stdout: string; stderr: string }

export interface RealDocker {
  /** The Debian docker CLI; `env` reaches the private daemon (DOCKER_HOST, DOCKER_CONFIG). */
  dockerPath: string;
  env: NodeJS.ProcessEnv;
  /** The CPU serving image (tag by content hash). */
  image: string;
  docker(args: string[]): DockerRun;
  /** The stub NVIDIA hook's log: one line per container that asked for GPUs (test/docker/nvidia-hook). */
  hookLog: string;
  /** Stops the daemon (its containers stop with it). */
  stopDaemon(): Promise<void>;
  /** (Re)starts the daemon; `nvidiaRuntime` registers a runtime named nvidia. */
  startDaemon(opts?: { nvidiaRuntime?: boolean }): Promise<void>;
  /** Removes every container; stops the daemon when this file started it. */
  release(): Promise<void>;
}

function answers(c: Client): boolean {
  return spawnSync(c.path, ['version', '--format', '{{.Server.Version}}'], { env: c.env, stdio: 'ignore' }).status === 0;
}

export async function realDocker(): Promise<RealDocker> {
  const d = await load<DaemonModule>('daemon.mjs');
  const c = d.client();
  const owns = !answers(c);
  if (owns) await d.startDaemon();
  const image = process.env.TRITON_CHATGLM_TEST_IMAGE
    || (await load<ImageModule>('image.mjs')).ensureImage(c, d.stateDir(), (l) => console.error(l));
  d.removeAllContainers(c);
  const docker = (args: string[]): DockerRun => {
    const r = spawnSync(c.path, args, { env: c.env, encoding: 'utf8', timeout: 120_000 });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  };
  // Set when a test stopped or reconfigured the daemon: the next file must find the stage's default one.
  let changed = false;
  return {
    dockerPath: c.path,
    env: c.env,
    image,
    docker,
    hookLog: join(d.stateDir(), 'nvidia-hook.log'),
    async stopDaemon() { changed = true; await d.stopDaemon(); },
    async startDaemon(opts = {}) { changed = true; await d.startDaemon(opts); },
    async release() {
      if (answers(c)) d.removeAllContainers(c);
      if (owns) await d.stopDaemon();
      else if (changed) await d.startDaemon();
    },
  };
}

/** The CLI bundle (same options as esbuild.mjs's CLI entry), so the stage does not depend on `npm run build`. */
export async function buildCli(): Promise<void> {
  await esbuild.build({
    entryPoints: { cli: join(projectRoot, 'src/cli/main.ts') },
    outdir: join(projectRoot, 'dist'),
    bundle: true, platform: 'node', format: 'cjs', target: 'node20', sourcemap: 'linked', legalComments: 'none',
    banner: { js: '#!/usr/bin/env node' }, logLevel: 'warning',
  });
}

export interface Run { code: number; stdout: string; stderr: string }

export function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolveRun) => {
    execFile(process.execPath, [cliPath, ...args], { env, cwd, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolveRun({ code, stdout, stderr });
    });
  });
}

/** A checkpoint folder that looks like ChatGLM3's (the CPU image's engine reads every file of it), world-readable. */
export function makeWeights(parent: string, mode = 0o644): string {
  const dir = join(parent, 'chatglm3-6b');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  chmodSync(parent, 0o755);
  const files: Record<string, string> = {
    // ChatGLM3-6B's shape: the weights check identifies the model by its config.json.
    'config.json': JSON.stringify(catalogConfigJson('chatglm3-6b')),
    'tokenizer.model': 'stand-in',
    'model-00001-of-00001.safetensors': 'stand-in',
  };
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), mode);
  }
  return dir;
}
