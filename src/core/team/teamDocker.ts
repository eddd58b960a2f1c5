// docker argument arrays of a team deployment: one tritonserver container per local replica (its ports on
// 127.0.0.1 only, the model loaded at start) and the nginx proxy (host network, so it reaches the replicas'
// loopback ports and listens only on the spec's bindAddress). Pure builders; the CLI runs them.
import { join } from 'node:path';
import { chosenModel, modelEntryName } from '../models/choice';
import { CONTAINER_MODELS_DIR, CONTAINER_PORTS, gpusArg, tritonServerArgs, weightsMount } from '../server/dockerArgs';
import { PROXY_CONF_DIR, PROXY_LOG_DIR } from './nginxConf';
import { isLocal, type LocalReplica, type TeamSpec } from './teamSpec';

export const TEAM_LABEL = 'triton-chatglm.team';
export const TEAM_ROLE_LABEL = 'triton-chatglm.team-role';

export const proxyContainer = (s: TeamSpec) => `tcg-team-${s.name}-proxy`;
export const replicaContainer = (s: TeamSpec, r: LocalReplica) => `tcg-team-${s.name}-${r.name}`;

/** Every container of the deployment, proxy first (stopped first: no new requests reach a stopping replica). */
export function teamContainers(s: TeamSpec): string[] {
  return [proxyContainer(s), ...s.replicas.filter(isLocal).map((r) => replicaContainer(s, r))];
}

/** Triton's name of the model the replicas serve (what clients address through the proxy). */
export function teamModelName(s: Pick<TeamSpec, 'model'>): string {
  return modelEntryName(chosenModel(s.model));
}

export function replicaRunArgs(s: TeamSpec, r: LocalReplica, dir: string, adminKey: string): string[] {
  const weights = weightsMount(s.weightsPath, s.model);
  return [
    'run', '-d', '--name', replicaContainer(s, r), '--pull', 'never',
    '--label', `${TEAM_LABEL}=${s.name}`, '--label', `${TEAM_ROLE_LABEL}=replica`,
    '--restart', 'unless-stopped',
    '--gpus', gpusArg(r.gpus),
    '--shm-size', s.shmSize,
    ...(s.raiseUlimits ? ['--ulimit', 'memlock=-1', '--ulimit', 'stack=67108864'] : []),
    '-p', `127.0.0.1:${r.httpPort}:${CONTAINER_PORTS.http}`,
    '-p', `127.0.0.1:${r.grpcPort}:${CONTAINER_PORTS.grpc}`,
    '-p', `127.0.0.1:${r.metricsPort}:${CONTAINER_PORTS.metrics}`,
    '-v', `${join(dir, 'model_repository')}:${CONTAINER_MODELS_DIR}:ro`,
    '-v', `${weights.source}:${weights.target}:ro`,
    '-e', 'HF_HUB_OFFLINE=1', '-e', 'TRANSFORMERS_OFFLINE=1', '-e', 'HF_HOME=/tmp/hf', '-e', 'TOKENIZERS_PARALLELISM=false',
    s.image, ...tritonServerArgs(adminKey), `--load-model=${teamModelName(s)}`,
  ];
}

export function proxyRunArgs(s: TeamSpec, dir: string): string[] {
  return [
    'run', '-d', '--name', proxyContainer(s), '--pull', 'never',
    '--label', `${TEAM_LABEL}=${s.name}`, '--label', `${TEAM_ROLE_LABEL}=proxy`,
    '--restart', 'unless-stopped',
    '--network', 'host',
    '-v', `${join(dir, 'nginx')}:${PROXY_CONF_DIR}:ro`,
    '-v', `${join(dir, 'logs')}:${PROXY_LOG_DIR}`,
    s.proxyImage,
  ];
}

export function proxyBuildArgs(s: TeamSpec, dir: string, base?: string): string[] {
  return ['build', '--network', 'host', ...(base ? ['--build-arg', `BASE=${base}`] : []), '-t', s.proxyImage, join(dir, 'proxy')];
}

/** `nginx -t` in a throwaway proxy container: a configuration that would not start is reported before anything changes. */
export function proxyCheckArgs(s: TeamSpec, dir: string): string[] {
  return ['run', '--rm', '--pull', 'never', '--network', 'none', '-v', `${join(dir, 'nginx')}:${PROXY_CONF_DIR}:ro`, s.proxyImage, 'nginx', '-t', '-q', '-c', `${PROXY_CONF_DIR}/nginx.conf`];
}

const nginx = (s: TeamSpec, ...args: string[]) => ['exec', proxyContainer(s), 'nginx', '-c', `${PROXY_CONF_DIR}/nginx.conf`, ...args];
/** Checks the configuration as the running proxy would read it. */
export const proxyTestArgs = (s: TeamSpec) => nginx(s, '-t', '-q');
/** New workers read the keys again; the old ones finish the answers they are streaming, then exit. */
export const proxyReloadArgs = (s: TeamSpec) => nginx(s, '-s', 'reload');
