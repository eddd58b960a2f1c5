// Settings of the managed Triton container, with defaults and validation. Shared by the VS Code settings adapter,
// the CLI and the tests; invalid values become a `settings-invalid` error naming the field instead of a docker error.
import { isAbsolute } from 'node:path';
import { DEFAULT_MODEL_ID } from '../models/catalog';
import { isModelId, MODEL_IDS } from '../models/choice';
import { ServerError } from './errors';

export interface ServerSettings {
  /** The docker binary: a name on PATH or an absolute path. */
  dockerPath: string;
  image: string;
  containerName: string;
  httpPort: number;
  grpcPort: number;
  metricsPort: number;
  /** Host address the ports are published on. Anything but loopback exposes the server: opt-in only. */
  bindAddress: string;
  /** 'all' or GPU ids / UUIDs as the host numbers them (inside the container they restart at 0). */
  gpuIds: 'all' | string[];
  /** Size of /dev/shm; the Python backend passes every tensor through it (docker's 64 MB default is too small). */
  shmSize: string;
  /** Pass `--ulimit memlock=-1` and `stack=64 MiB` (NVIDIA's advice for Triton); a rootless daemon refuses them. */
  raiseUlimits: boolean;
  /** Host directory of the chosen model's checkpoint (mounted read-only). */
  weightsPath: string;
  /** The chosen catalog model (src/core/models): where its weights are mounted. */
  model: string;
  /** Host directory of the rendered model repository (mounted read-only). */
  repositoryPath: string;
  extraEnv: Record<string, string>;
}

export const DEFAULT_SETTINGS: Readonly<Omit<ServerSettings, 'weightsPath' | 'repositoryPath'>> = Object.freeze({
  dockerPath: 'docker',
  image: 'triton-chatglm:24.10',
  containerName: 'triton-chatglm3',
  httpPort: 8000,
  grpcPort: 8001,
  metricsPort: 8002,
  bindAddress: '127.0.0.1',
  gpuIds: 'all',
  shmSize: '2g',
  raiseUlimits: true,
  model: DEFAULT_MODEL_ID,
  extraEnv: {},
});

export type ServerSettingsInput = Partial<ServerSettings> & Pick<ServerSettings, 'weightsPath' | 'repositoryPath'>;

/** Fills defaults and validates; throws ServerError('settings-invalid') naming the first bad field. */
export function resolveSettings(input: ServerSettingsInput): ServerSettings {
  const s: ServerSettings = {
    ...DEFAULT_SETTINGS,
    ...stripUndefined(input),
    weightsPath: input.weightsPath,
    repositoryPath: input.repositoryPath,
    extraEnv: { ...(input.extraEnv ?? {}) },
  };
  const bad = (field: string, why: string): never => {
    throw new ServerError({ code: 'settings-invalid', message: `Invalid setting "${field}": ${why}`, fix: `Correct "${field}" in the settings.` });
  };
  if (!isModelId(s.model)) bad('model', `choose one of ${MODEL_IDS.join(', ')}.`);
  if (!s.dockerPath.trim()) bad('dockerPath', 'it is empty.');
  if (!/^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/.test(s.image)) bad('image', `"${s.image}" is not a docker image reference.`);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]+$/.test(s.containerName)) bad('containerName', 'use letters, digits, "_", "." and "-" only.');
  for (const key of ['httpPort', 'grpcPort', 'metricsPort'] as const) {
    const p = s[key];
    if (!Number.isInteger(p) || p < 1 || p > 65535) bad(key, `${String(p)} is not a port number (1-65535).`);
  }
  if (new Set([s.httpPort, s.grpcPort, s.metricsPort]).size !== 3) bad('httpPort', 'the HTTP, gRPC and metrics ports must differ.');
  if (!isIpAddress(s.bindAddress)) bad('bindAddress', `"${s.bindAddress}" is not an IP address.`);
  if (s.gpuIds !== 'all') {
    if (!Array.isArray(s.gpuIds) || s.gpuIds.length === 0) bad('gpuIds', 'give "all" or at least one GPU id.');
    for (const id of s.gpuIds) if (!/^(\d+|GPU-[0-9a-fA-F-]+|MIG-[0-9a-zA-Z/-]+)$/.test(id)) bad('gpuIds', `"${id}" is not a GPU index or UUID.`);
  }
  if (!/^\d+(\.\d+)?[bkmg]?$/i.test(s.shmSize)) bad('shmSize', `"${s.shmSize}" is not a size such as 2g or 512m.`);
  if (!isAbsolute(s.weightsPath)) bad('weightsPath', 'give the absolute path of the chosen model\'s checkpoint directory.');
  if (!isAbsolute(s.repositoryPath)) bad('repositoryPath', 'it must be an absolute path.');
  for (const k of Object.keys(s.extraEnv)) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) bad('extraEnv', `"${k}" is not an environment variable name.`);
  return s;
}

/** Loopback binding is the safe default; callers warn the user when this is false. */
export function isLoopback(address: string): boolean {
  return address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address) || address === 'localhost';
}

/** Where this machine reaches the published HTTP port (a wildcard bind is reached on loopback). */
export function connectHost(bindAddress: string): string {
  if (bindAddress === '0.0.0.0' || bindAddress === '::') return '127.0.0.1';
  return bindAddress.includes(':') ? `[${bindAddress}]` : bindAddress;
}

function isIpAddress(a: string): boolean {
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(a)) return a.split('.').every((n) => Number(n) <= 255);
  return /^[0-9a-fA-F:]+$/.test(a) && a.includes(':');
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
