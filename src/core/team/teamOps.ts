// What each `triton-chatglm team` command does, in order: which files change, which containers start or stop,
// when nginx reloads. The front end (src/cli/team.ts) parses flags, prints and maps errors.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { installRepository } from '../repository/install';
import { newAdminKey, weightsMount } from '../server/dockerArgs';
import type { DockerCli } from '../server/dockerCli';
import { loadExeca } from '../server/dockerCli';
import { addKey, revokeKey, type KeyEntry } from './keys';
import { proxyBuildArgs, proxyCheckArgs, proxyContainer, proxyReloadArgs, proxyRunArgs, proxyTestArgs, replicaContainer, replicaRunArgs, teamContainers } from './teamDocker';
import { readKeys, readTeamSpec, teamPaths, writeKeys, writeTeamFiles } from './teamFiles';
import { isLocal, newTeamSpec, type NewTeamOptions, type TeamSpec } from './teamSpec';
import { certificateFingerprint, selfSignedArgs } from './tls';

export interface TeamInitOptions extends NewTeamOptions {
  /** A certificate and its key to use instead of a self-signed one. */
  certFile?: string;
  keyFile?: string;
  /** Replace an existing team.json (otherwise it is kept and only the rendered files are refreshed). */
  force?: boolean;
  /** The package's deploy/team/nginx/Dockerfile. */
  dockerfileTemplate: string;
  openssl?: string;
}

export interface TeamInitResult {
  spec: TeamSpec;
  fingerprint: string;
  selfSigned: boolean;
}

export async function teamInit(dir: string, o: TeamInitOptions): Promise<TeamInitResult> {
  const p = teamPaths(dir);
  const spec = existsSync(p.spec) && !o.force ? readTeamSpec(dir) : newTeamSpec(o);
  writeTeamFiles(dir, spec, readFileSync(o.dockerfileTemplate, 'utf8'));
  let selfSigned = false;
  mkdirSync(dirname(p.cert), { recursive: true, mode: 0o700 });
  if (o.certFile || o.keyFile) {
    if (!o.certFile || !o.keyFile) throw new Error('--cert and --key go together');
    certificateFingerprint(readFileSync(o.certFile));
    copyFileSync(o.certFile, p.cert);
    copyFileSync(o.keyFile, p.key);
  } else if (!existsSync(p.cert)) {
    const { execa } = await loadExeca();
    const r = await execa(o.openssl ?? 'openssl', selfSignedArgs(p.cert, p.key, hostname() || 'triton-chatglm-team', spec.tlsNames), { reject: false, stdin: 'ignore' });
    if (r.exitCode !== 0) throw new Error(`openssl could not make a certificate: ${String(r.stderr ?? r.message).trim()}`);
    selfSigned = true;
  }
  return { spec, fingerprint: certificateFingerprint(readFileSync(p.cert)), selfSigned };
}

export interface TeamUpOptions {
  /** The packaged triton/model_repository. */
  repositorySource: string;
  /** Build the proxy image on this base (the test stage's local Debian base); default: Debian from the registry. */
  proxyBase?: string;
  /** Build the proxy image even when it exists. */
  buildProxy?: boolean;
  onStep?: (text: string) => void;
}

async function exists(docker: DockerCli, kind: 'image' | 'container', name: string): Promise<boolean> {
  return (await docker.run([kind, 'inspect', '--format', '{{.Id}}', name])).exitCode === 0;
}

/** Starts what is not running: the replicas (model loaded at start), then the proxy. */
export async function teamUp(docker: DockerCli, dir: string, o: TeamUpOptions): Promise<TeamSpec> {
  const spec = readTeamSpec(dir);
  const p = teamPaths(dir);
  if (!existsSync(p.cert) || !existsSync(p.key)) throw new Error(`no certificate in ${p.cert}: run \`triton-chatglm team init\` first`);
  const step = o.onStep ?? (() => undefined);
  if (spec.replicas.some(isLocal)) {
    // Each replica's entry reads the weights where the replica mounts them (a Hub cache snapshot or a plain folder).
    const settings = { model: spec.model, weightsPath: weightsMount(spec.weightsPath, spec.model).weightsPath };
    await installRepository({ source: o.repositorySource, destination: p.repository, settings });
  }
  for (const r of spec.replicas.filter(isLocal)) {
    const name = replicaContainer(spec, r);
    if (await exists(docker, 'container', name)) { step(`${name}: exists`); continue; }
    step(`${name}: starting on GPU ${r.gpus.join(',')}`);
    const key = newAdminKey();
    await docker.exec(replicaRunArgs(spec, r, dir, key), { secret: key });
  }
  if (o.buildProxy || !(await exists(docker, 'image', spec.proxyImage))) {
    step(`building ${spec.proxyImage}`);
    await docker.exec(proxyBuildArgs(spec, dir, o.proxyBase));
  }
  const proxy = proxyContainer(spec);
  await docker.exec(proxyCheckArgs(spec, dir));
  if (await exists(docker, 'container', proxy)) {
    await docker.exec(proxyReloadArgs(spec));
    step(`${proxy}: configuration reloaded`);
  } else {
    step(`${proxy}: starting on ${spec.bindAddress}:${spec.httpsPort} (HTTPS) and :${spec.grpcPort} (gRPC)`);
    await docker.exec(proxyRunArgs(spec, dir));
  }
  return spec;
}

/** Stops the proxy first (no new requests), then the replicas; removes the containers. */
export async function teamDown(docker: DockerCli, dir: string): Promise<string[]> {
  const spec = readTeamSpec(dir);
  const removed: string[] = [];
  for (const name of teamContainers(spec)) {
    if (!(await exists(docker, 'container', name))) continue;
    await docker.run(['stop', '-t', '40', name]);
    await docker.exec(['rm', '-f', name]);
    removed.push(name);
  }
  return removed;
}

/** Reloads a running proxy after the keys changed (checked first: a bad file never replaces a good one). */
async function reloadIfRunning(docker: DockerCli, spec: TeamSpec): Promise<boolean> {
  const r = await docker.run(['container', 'inspect', '--format', '{{.State.Running}}', proxyContainer(spec)]);
  if (r.exitCode !== 0 || r.stdout.trim() !== 'true') return false;
  await docker.exec(proxyTestArgs(spec));
  await docker.exec(proxyReloadArgs(spec));
  return true;
}

export async function teamKeysAdd(docker: DockerCli, dir: string, id: string, now = new Date()): Promise<{ key: string; reloaded: boolean }> {
  const spec = readTeamSpec(dir);
  const { entries, key } = addKey(readKeys(dir), id, now);
  writeKeys(dir, entries);
  return { key, reloaded: await reloadIfRunning(docker, spec) };
}

export async function teamKeysRevoke(docker: DockerCli, dir: string, id: string): Promise<{ reloaded: boolean }> {
  const spec = readTeamSpec(dir);
  writeKeys(dir, revokeKey(readKeys(dir), id));
  return { reloaded: await reloadIfRunning(docker, spec) };
}

export function teamKeysList(dir: string): KeyEntry[] {
  readTeamSpec(dir);
  return readKeys(dir);
}

export interface TeamContainerState { name: string; state: string }

export async function teamContainerStates(docker: DockerCli, dir: string): Promise<{ spec: TeamSpec; containers: TeamContainerState[] }> {
  const spec = readTeamSpec(dir);
  const containers: TeamContainerState[] = [];
  for (const name of teamContainers(spec)) {
    const r = await docker.run(['container', 'inspect', '--format', '{{.State.Status}}', name]);
    containers.push({ name, state: r.exitCode === 0 ? r.stdout.trim() : 'absent' });
  }
  return { spec, containers };
}
