// Command line and environment → the CLI's configuration. Pure (argv and env in, config or UsageError out) so
// every flag and its environment equivalent is unit-tested.
import { isAbsolute, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { parseCursorSpec, type CursorSpec } from '../core/completion/cursorSpec';
import { isModelId, MODEL_IDS } from '../core/models/choice';
import { MAX_REPETITION_PENALTY, MIN_REPETITION_PENALTY } from '../core/triton/chatglm';
import { defaultHubCache } from '../core/weights/hubCache';

export const COMMANDS = ['status', 'start', 'stop', 'restart', 'load', 'unload', 'chat', 'complete', 'stats', 'logs', 'build-image', 'preflight', 'download', 'serve-openai'] as const;
export type Command = (typeof COMMANDS)[number];

/** A mistake in how the CLI was called (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Flag → environment variable used when the flag is absent. */
export const ENV_VARS = {
  docker: 'TRITON_CHATGLM_DOCKER',
  image: 'TRITON_CHATGLM_IMAGE',
  container: 'TRITON_CHATGLM_CONTAINER',
  port: 'TRITON_CHATGLM_PORT',
  'grpc-port': 'TRITON_CHATGLM_GRPC_PORT',
  'metrics-port': 'TRITON_CHATGLM_METRICS_PORT',
  'bind-address': 'TRITON_CHATGLM_BIND_ADDRESS',
  gpus: 'TRITON_CHATGLM_GPUS',
  'shm-size': 'TRITON_CHATGLM_SHM_SIZE',
  weights: 'TRITON_CHATGLM_WEIGHTS',
  'repository-source': 'TRITON_CHATGLM_REPOSITORY_SOURCE',
  repository: 'TRITON_CHATGLM_REPOSITORY',
  'max-batch-size': 'TRITON_CHATGLM_MAX_BATCH_SIZE',
  engine: 'TRITON_CHATGLM_ENGINE',
  model: 'TRITON_CHATGLM_MODEL',
  url: 'TRITON_CHATGLM_URL',
  'admin-key': 'TRITON_CHATGLM_ADMIN_KEY',
  'ca-file': 'TRITON_CHATGLM_CA_FILE',
  history: 'TRITON_CHATGLM_HISTORY',
  // serve-openai (its --port is the endpoint's; Triton's HTTP port then comes from TRITON_CHATGLM_PORT only).
  host: 'TRITON_CHATGLM_OPENAI_HOST',
  'api-key': 'TRITON_CHATGLM_OPENAI_API_KEY',
  // download: the Hub's own variables, as huggingface-cli reads them.
  endpoint: 'HF_ENDPOINT',
  revision: 'TRITON_CHATGLM_WEIGHTS_REVISION',
} as const;

const STRING_OPTIONS = [
  ...Object.keys(ENV_VARS), 'temperature', 'top-p', 'top-k', 'repetition-penalty', 'seed', 'max-new-tokens', 'history-len', 'timeout', 'tail', 'system', 'dir',
] as const;

export interface CliConfig {
  command: Command;
  /** The chat prompt (all positional words joined). */
  prompt: string;
  /** complete: FILE:LINE:COL. */
  cursor?: CursorSpec;
  dockerPath?: string;
  image?: string;
  containerName?: string;
  httpPort?: number;
  grpcPort?: number;
  metricsPort?: number;
  bindAddress?: string;
  gpuIds?: 'all' | string[];
  shmSize?: string;
  weightsPath?: string;
  repositorySource?: string;
  repositoryPath: string;
  maxBatchSize?: number;
  /** The model's engine (the `tritonChatglm.engine` setting): `native` (continuous batching; the HF engine is test-only). */
  engine?: 'native';
  /** The catalog model to serve (the `tritonChatglm.model` setting; default chatglm3-6b). */
  model?: string;
  /** External Triton server: no docker at all. */
  url?: string;
  adminKey?: string;
  /** A team server's API key, from TRITON_CHATGLM_KEY only (a flag would show in `ps`). */
  teamKey?: string;
  /** PEM file of the CA to trust for an https --url (a team server's self-signed certificate). */
  caFile?: string;
  historyFile?: string;
  system?: string;
  temperature?: number;
  topP?: number;
  topK?: number;
  repetitionPenalty?: number;
  seed?: number;
  maxNewTokens?: number;
  historyLen?: number;
  /** Seconds; start: liveness deadline, load: load deadline. */
  timeoutS?: number;
  tail?: number;
  /** serve-openai: the endpoint's address, port and API key. */
  openaiHost?: string;
  openaiPort?: number;
  openaiApiKey?: string;
  /** download: the Hugging Face cache root the snapshot goes into ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub). */
  downloadDir: string;
  /** download: branch, tag or commit (default: the model's catalog revision). */
  revision?: string;
  /** download: the Hub endpoint or a mirror (HF_ENDPOINT). */
  endpoint?: string;
  /** download: a token for gated or private repositories, from HF_TOKEN only (a flag would show in `ps`). */
  hubToken?: string;
  follow: boolean;
  /** false with --no-ulimits: the container starts without --ulimit memlock/stack (rootless Docker refuses them). */
  raiseUlimits: boolean;
  preflight: boolean;
  buildImage: boolean;
  /** download: the model's licence is accepted (asked once per model; remembered in licenseDir). */
  acceptLicense: boolean;
  /** Where accepted licences are remembered: $XDG_DATA_HOME/triton-chatglm (or ~/.local/share/triton-chatglm). */
  licenseDir: string;
  json: boolean;
  verbose: boolean;
  help: boolean;
  version: boolean;
}

export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): CliConfig {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(STRING_OPTIONS.map((o) => [o, { type: 'string' as const }])),
        'no-preflight': { type: 'boolean' },
        'no-ulimits': { type: 'boolean' },
        'build-image': { type: 'boolean' },
        'accept-license': { type: 'boolean' },
        follow: { type: 'boolean', short: 'f' },
        json: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const v = parsed.values as Record<string, string | boolean | undefined>;
  const str = (name: string): string | undefined => {
    const flag = v[name];
    if (typeof flag === 'string') return flag;
    const envName = (ENV_VARS as Record<string, string>)[name];
    const fromEnv = envName ? env[envName] : undefined;
    return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
  };
  const num = (name: string, kind: 'int' | 'float', min: number, max: number): number | undefined => {
    const s = str(name);
    if (s === undefined) return undefined;
    const n = Number(s);
    if (s.trim() === '' || !Number.isFinite(n) || (kind === 'int' && !Number.isInteger(n)) || n < min || n > max) {
      throw new UsageError(`--${name} must be ${kind === 'int' ? 'a whole number' : 'a number'} from ${min} to ${max} (got "${s}").`);
    }
    return n;
  };
  const path = (name: string): string | undefined => {
    const s = str(name);
    return s === undefined ? undefined : isAbsolute(s) ? s : resolve(cwd, s);
  };

  const [first, ...rest] = parsed.positionals;
  const help = v.help === true;
  const version = v.version === true;
  if (!first && !help && !version) throw new UsageError('Missing command.');
  if (first && !(COMMANDS as readonly string[]).includes(first)) throw new UsageError(`Unknown command "${first}". Commands: ${COMMANDS.join(', ')}.`);
  const command = (first ?? 'status') as Command;
  if (command !== 'chat' && command !== 'complete' && rest.length) throw new UsageError(`"${command}" takes no arguments (got "${rest.join(' ')}").`);
  let cursor: CursorSpec | undefined;
  if (command === 'complete' && !help) {
    if (rest.length !== 1) throw new UsageError('complete needs one FILE:LINE:COL, e.g. triton-chatglm complete src/app.py:12:5');
    cursor = parseCursorSpec(rest[0]!);
    if (!cursor) throw new UsageError(`complete needs FILE:LINE:COL with LINE and COL from 1 (got "${rest[0]}").`);
    cursor = { ...cursor, file: isAbsolute(cursor.file) ? cursor.file : resolve(cwd, cursor.file) };
  }
  const prompt = command === 'complete' ? '' : rest.join(' ');
  if (command === 'chat' && !help && prompt.trim() === '') throw new UsageError('chat needs a message: triton-chatglm chat "Hello"');

  // serve-openai: --port is the endpoint's own port (TRITON_CHATGLM_OPENAI_PORT); Triton's stays in TRITON_CHATGLM_PORT.
  const openai = command === 'serve-openai';
  const portOf = (text: string | undefined, what: string): number | undefined => {
    if (text === undefined || text === '') return undefined;
    const n = Number(text);
    if (text.trim() === '' || !Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`${what} must be a whole number from 1 to 65535 (got "${text}").`);
    return n;
  };
  const httpPort = openai ? portOf(env[ENV_VARS.port], ENV_VARS.port) : num('port', 'int', 1, 65535);
  const openaiPort = openai ? portOf(typeof v.port === 'string' ? v.port : env.TRITON_CHATGLM_OPENAI_PORT, '--port') : undefined;
  const gpus = str('gpus');
  let gpuIds: CliConfig['gpuIds'];
  if (gpus !== undefined) {
    gpuIds = gpus.trim() === 'all' ? 'all' : gpus.split(',').map((g) => g.trim()).filter(Boolean);
    if (gpuIds !== 'all' && gpuIds.length === 0) throw new UsageError('--gpus must be "all" or a comma-separated list of GPU ids, e.g. 0,1.');
  }
  const engine = str('engine');
  if (engine !== undefined && engine !== 'native') throw new UsageError(`--engine must be "native" (got "${engine}").`);
  const model = str('model');
  if (model !== undefined && !isModelId(model)) throw new UsageError(`--model must be one of ${MODEL_IDS.join(', ')} (got "${model}").`);
  const url = str('url');
  if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError(`--url must be an http:// or https:// URL (got "${url}").`);

  return {
    command,
    prompt,
    ...(cursor ? { cursor } : {}),
    dockerPath: str('docker'),
    image: str('image'),
    containerName: str('container'),
    httpPort,
    // Without explicit gRPC/metrics ports, they follow the HTTP port (+1, +2) like Triton's defaults.
    grpcPort: num('grpc-port', 'int', 1, 65535) ?? (httpPort !== undefined ? httpPort + 1 : undefined),
    metricsPort: num('metrics-port', 'int', 1, 65535) ?? (httpPort !== undefined ? httpPort + 2 : undefined),
    bindAddress: str('bind-address'),
    gpuIds,
    shmSize: str('shm-size'),
    weightsPath: path('weights'),
    repositorySource: path('repository-source'),
    repositoryPath: path('repository') ?? defaultRepositoryPath(env),
    maxBatchSize: num('max-batch-size', 'int', 1, 64),
    engine,
    model,
    url: url?.replace(/\/+$/, ''),
    adminKey: str('admin-key'),
    teamKey: env.TRITON_CHATGLM_KEY || undefined,
    caFile: path('ca-file'),
    historyFile: path('history'),
    system: typeof v.system === 'string' ? v.system : undefined,
    temperature: num('temperature', 'float', 0, 2),
    topP: num('top-p', 'float', 0, 1),
    topK: num('top-k', 'int', 0, 65024),
    repetitionPenalty: num('repetition-penalty', 'float', MIN_REPETITION_PENALTY, MAX_REPETITION_PENALTY),
    seed: num('seed', 'int', 0, Number.MAX_SAFE_INTEGER),
    maxNewTokens: num('max-new-tokens', 'int', 1, 131072),
    historyLen: num('history-len', 'int', 0, 1000),
    timeoutS: num('timeout', 'float', 1, 86400),
    tail: num('tail', 'int', 0, 100000),
    downloadDir: path('dir') ?? defaultHubCache(env, env.HOME || env.USERPROFILE || homedir()),
    revision: str('revision'),
    endpoint: str('endpoint'),
    openaiHost: str('host'),
    openaiPort,
    openaiApiKey: str('api-key'),
    hubToken: env.HF_TOKEN || env.HUGGING_FACE_HUB_TOKEN || undefined,
    follow: v.follow === true,
    raiseUlimits: v['no-ulimits'] !== true,
    preflight: v['no-preflight'] !== true,
    buildImage: v['build-image'] === true,
    acceptLicense: v['accept-license'] === true,
    licenseDir: join(dataHome(env), 'triton-chatglm'),
    json: v.json === true,
    verbose: v.verbose === true,
    help,
    version,
  };
}

function dataHome(env: NodeJS.ProcessEnv): string {
  return env.XDG_DATA_HOME || join(env.HOME || env.USERPROFILE || '.', '.local', 'share');
}

/** Where `start` writes the rendered model repository: $XDG_DATA_HOME or ~/.local/share. */
export function defaultRepositoryPath(env: NodeJS.ProcessEnv): string {
  return join(dataHome(env), 'triton-chatglm', 'model_repository');
}

export const USAGE = `Usage: triton-chatglm <command> [options]

Runs ChatGLM3-6B, GLM-4-9B-Chat or CodeGeeX4-ALL-9B on your GPU with NVIDIA Triton Inference Server in a Docker container.

Commands:
  status                 container, server and model state (exit code 3 when the server is not running)
  preflight              check Docker and its daemon, the NVIDIA runtime, the image, the weights, the ports and GPU memory
  build-image            build the Triton image from triton/Dockerfile
  start                  start the container and wait until the server is live
  stop                   stop and remove the container
  restart                stop, then start
  load                   load the model (takes minutes for the real model)
  unload                 unload the model and free GPU memory
  chat "message"         stream an answer to stdout (--history FILE keeps the conversation)
  complete FILE:LINE:COL print the code completion at that cursor (LINE and COL from 1; needs a model with
                         fill-in-the-middle: CodeGeeX4-ALL-9B); --json adds its mode
  stats                  what the model is generating now, its rates and its batching and latency statistics
  logs                   print the container's log (--follow, --tail N)
  serve-openai           an OpenAI-compatible endpoint (/v1/chat/completions, /v1/completions, /v1/models) in
                         front of the running server, until Ctrl+C
  download               download the chosen model (--model; ChatGLM3-6B, 12.5 GB, by default) from the Hugging
                         Face Hub into its cache, resumable and verified; prints the weights folder (start finds
                         it there by itself); a licence that limits commercial use needs --accept-license once
  team ...               a team server: N tritonservers behind an nginx proxy with TLS and per-user keys
                         (\`triton-chatglm team --help\`)

Options (environment variable in brackets):
  --docker PATH              docker binary [TRITON_CHATGLM_DOCKER]
  --image REF                Triton image (default triton-chatglm:24.10) [TRITON_CHATGLM_IMAGE]
  --container NAME           container name (default triton-chatglm3) [TRITON_CHATGLM_CONTAINER]
  --port N                   HTTP port (default 8000; gRPC and metrics follow: N+1, N+2) [TRITON_CHATGLM_PORT]
  --grpc-port N, --metrics-port N   [TRITON_CHATGLM_GRPC_PORT, TRITON_CHATGLM_METRICS_PORT]
  --bind-address IP          default 127.0.0.1; anything else exposes the server [TRITON_CHATGLM_BIND_ADDRESS]
  --gpus all|0,1             GPUs for the model, one instance on each (default all: the model on the first)
                             [TRITON_CHATGLM_GPUS]
  --shm-size SIZE            /dev/shm of the container (default 2g) [TRITON_CHATGLM_SHM_SIZE]
  --no-ulimits               start without --ulimit memlock/stack (a daemon that refuses them: rootless Docker)
  --model ID                 the model to serve: chatglm3-6b (default), glm-4-9b-chat or codegeex4-all-9b
                             (start, load, download and the rest address it) [TRITON_CHATGLM_MODEL]
  --weights DIR              the chosen model's checkpoint directory [TRITON_CHATGLM_WEIGHTS]
  --repository-source DIR    model repository to install (default: the packaged triton/model_repository)
                             [TRITON_CHATGLM_REPOSITORY_SOURCE]
  --repository DIR           where the rendered repository is written [TRITON_CHATGLM_REPOSITORY]
  --max-batch-size N         dynamic batch size of the model [TRITON_CHATGLM_MAX_BATCH_SIZE]
  --engine native            the model's engine: native (continuous batching) [TRITON_CHATGLM_ENGINE]
  --url URL                  use an external Triton server instead of the container [TRITON_CHATGLM_URL]
  --admin-key KEY            admin key of an external server for load/unload [TRITON_CHATGLM_ADMIN_KEY]
  --ca-file FILE             CA certificate (PEM) to trust for an https --url, e.g. a team server's [TRITON_CHATGLM_CA_FILE]
                             (a team server's API key: the TRITON_CHATGLM_KEY environment variable only)
  --dir DIR                  download: the Hugging Face cache to use (default $HF_HUB_CACHE, $HF_HOME/hub or
                             ~/.cache/huggingface/hub)
  --revision REV             download: branch, tag or commit (default: the model's catalog revision, a pinned
                             commit for GLM-4-9B-Chat) [TRITON_CHATGLM_WEIGHTS_REVISION]
  --accept-license           download: accept the model's licence (its name, terms and URL are printed first)
  --endpoint URL             download: the Hub or a mirror, e.g. https://hf-mirror.com [HF_ENDPOINT]
                             (a token for gated repositories is read from HF_TOKEN)
  --host IP                  serve-openai: address to listen on (default 127.0.0.1; any other needs an API key)
                             [TRITON_CHATGLM_OPENAI_HOST]
  --port N                   serve-openai: the endpoint's port (default 8003) [TRITON_CHATGLM_OPENAI_PORT];
                             Triton's port then comes from TRITON_CHATGLM_PORT
  --api-key KEY              serve-openai: clients must send Authorization: Bearer KEY (the variable keeps it out
                             of \`ps\`) [TRITON_CHATGLM_OPENAI_API_KEY]
  --history FILE             chat: JSON file with the conversation, read and updated [TRITON_CHATGLM_HISTORY]
  --system TEXT              chat: system prompt for a new conversation
  --temperature X, --top-p X, --max-new-tokens N, --history-len N   chat sampling options
  --top-k N (0 = off), --repetition-penalty X (1 = off), --seed N     more sampling options (same seed, same answer)
  --timeout SECONDS          start: liveness deadline; load: load deadline
  --no-preflight             start without the preflight checks
  --build-image              start: build the image first when it is missing
  --json                     status/stats/preflight/complete: machine-readable output; download: one JSON event a line
  -v, --verbose              print the docker commands and error details
  -h, --help, --version
`;
