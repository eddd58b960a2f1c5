// Typed failures of the container layer. Core code carries a stable code, an English message and an English fix;
// the VS Code layer localizes by code (the English text is the l10n key's default), the CLI prints it as is.

export type ServerErrorCode =
  | 'docker-missing'
  | 'daemon-unreachable'
  | 'permission-denied'
  | 'nvidia-runtime-missing'
  | 'image-missing'
  | 'port-allocated'
  | 'name-conflict'
  | 'container-exited'
  | 'weights-missing'
  | 'weights-invalid'
  /** Not enough free GPU memory for the model (a warning of the preflight; the load would fail). */
  | 'gpu-memory-low'
  | 'settings-invalid'
  /** The daemon may not raise the container's memlock/stack limit (rootless Docker, or no such privilege). */
  | 'ulimit-denied'
  /** The engine asks for a limit above this host's and may not raise it (rootful podman without CAP_SYS_RESOURCE). */
  | 'engine-limits'
  /** A file the server must read (weights, rendered repository) is not readable by the user it runs as. */
  | 'files-unreadable'
  /** `docker build` failed; `buildStep` names the failing step when the log told it. */
  | 'build-failed'
  | 'liveness-timeout'
  | 'cancelled'
  | 'unknown';

export interface ServerErrorInit {
  code: ServerErrorCode;
  message: string;
  fix: string;
  /** Raw evidence (docker's stderr, last log lines); shown in an output channel, never as the headline. */
  detail?: string;
  /** Last lines the container wrote, when it died. */
  logTail?: string[];
  exitCode?: number;
  /** build-failed: the failing step as the builder printed it (`Step 2/5 : RUN …`, `[2/5] RUN …`). */
  buildStep?: string;
  /** files-unreadable: the first file the server could not read. */
  file?: string;
  /** A line to put in a configuration file that fixes it, language-neutral (engine-limits: containers.conf's). */
  suggestion?: string;
}

export class ServerError extends Error {
  readonly code: ServerErrorCode;
  readonly fix: string;
  readonly detail: string | undefined;
  readonly logTail: string[] | undefined;
  readonly exitCode: number | undefined;
  readonly buildStep: string | undefined;
  readonly file: string | undefined;
  readonly suggestion: string | undefined;

  constructor(init: ServerErrorInit) {
    super(init.message);
    this.name = 'ServerError';
    this.code = init.code;
    this.fix = init.fix;
    this.detail = init.detail;
    this.logTail = init.logTail;
    this.exitCode = init.exitCode;
    this.buildStep = init.buildStep;
    this.file = init.file;
    this.suggestion = init.suggestion;
  }
}

export function isServerError(e: unknown): e is ServerError {
  return e instanceof ServerError;
}

/** What we know about one failed docker invocation. */
export interface DockerFailure {
  /** Node's errno code when the binary could not be spawned (ENOENT: not installed / not on PATH). */
  errno?: string;
  exitCode?: number;
  stderr: string;
  /** The docker binary we tried, for the message. */
  dockerPath?: string;
}

const NVIDIA_FIX =
  'Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker ' +
  '(a Snap-installed Docker is a known cause). Check with `docker run --rm --gpus all ubuntu nvidia-smi -L`.';

/**
 * Maps a failed docker call to a typed error. Pure: only docker's own words and exit status are used, so each
 * branch is unit-tested with real messages. Order matters: the most specific texts are tested first.
 */
export function classifyDockerFailure(f: DockerFailure): ServerError {
  const stderr = f.stderr.trim();
  const detail = stderr || undefined;
  const docker = f.dockerPath ?? 'docker';
  if (f.errno === 'ENOENT' || f.errno === 'EACCES' && !stderr) {
    return new ServerError({
      code: 'docker-missing',
      message: `The Docker command "${docker}" was not found.`,
      fix: 'Install Docker Engine (https://docs.docker.com/engine/install/) or set the path of the docker binary in the settings.',
      detail,
    });
  }
  if (/permission denied while trying to connect to the docker (daemon|api)/i.test(stderr)) {
    return new ServerError({
      code: 'permission-denied',
      message: 'You do not have permission to use the Docker daemon socket.',
      fix: 'Add your user to the "docker" group (`sudo usermod -aG docker $USER`), then log out and back in.',
      detail,
    });
  }
  if (/cannot connect to the docker daemon|is the docker daemon running|error during connect/i.test(stderr)) {
    return new ServerError({
      code: 'daemon-unreachable',
      message: 'The Docker daemon is not running or cannot be reached.',
      fix: 'Start Docker (`sudo systemctl start docker`, or start Docker Desktop) and try again.',
      detail,
    });
  }
  if (/could not select device driver "[^"]*" with capabilities: \[\[gpu\]\]|unknown or invalid runtime name: nvidia|nvidia-container-cli: initialization error/i.test(stderr)) {
    return new ServerError({
      code: 'nvidia-runtime-missing',
      message: 'Docker cannot give the container a GPU: the NVIDIA Container Toolkit is missing or not configured.',
      fix: NVIDIA_FIX,
      detail,
    });
  }
  // runc's text when the daemon may not set a limit: type 8 is RLIMIT_MEMLOCK, 3 RLIMIT_STACK (our --ulimit flags);
  // any other (7 RLIMIT_NOFILE, 6 RLIMIT_NPROC) is the engine's own default, which no setting of ours drops.
  const rlimit = /error setting rlimit type (\d+): operation not permitted/i.exec(stderr);
  if (rlimit && rlimit[1] !== '8' && rlimit[1] !== '3') {
    const name = RLIMIT_NAMES[rlimit[1]!] ?? `limit ${rlimit[1]}`;
    return new ServerError({
      code: 'engine-limits',
      message: `The container engine may not set the container's ${name} limit: it asks for more than this host allows and may not raise limits.`,
      fix: 'With podman: set default_ulimits in /etc/containers/containers.conf ([containers] section) to at most this host\'s hard limits (`ulimit -Hn`, `ulimit -Hu`); or use Docker.',
      detail,
    });
  }
  if (rlimit) {
    return new ServerError({
      code: 'ulimit-denied',
      message: 'Docker may not raise the container\'s memory-lock or stack limit (rootless Docker, or a daemon without that privilege).',
      fix: 'Turn off "tritonChatglm.raiseUlimits" in the settings (the server runs without --ulimit), or give the Docker daemon the privilege to raise limits.',
      detail,
    });
  }
  // podman's GPUs are CDI devices: without the NVIDIA spec (`nvidia-ctk cdi generate`) they cannot be resolved.
  if (/unresolvable CDI devices/i.test(stderr)) {
    return new ServerError({
      code: 'nvidia-runtime-missing',
      message: 'Podman cannot give the container a GPU: the NVIDIA CDI spec is missing.',
      fix: 'Install the NVIDIA Container Toolkit and run `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` (check with `nvidia-ctk cdi list`).',
      detail,
    });
  }
  if (/Conflict\. The container name .* is already in use/i.test(stderr)) {
    return new ServerError({
      code: 'name-conflict',
      message: 'A container with this name already exists and was not started by this extension.',
      fix: 'Remove or rename that container (`docker rm -f <name>`), or choose another container name in the settings.',
      detail,
    });
  }
  if (/port is already allocated|address already in use|ports are not available/i.test(stderr)) {
    const port = /(?:Bind for|listen tcp[46]?) [^\s]*?:(\d+)/.exec(stderr)?.[1];
    return new ServerError({
      code: 'port-allocated',
      message: port ? `Port ${port} is already in use on this machine.` : 'A port the server needs is already in use on this machine.',
      fix: 'Stop the program that uses the port, or choose other HTTP/gRPC/metrics ports in the settings.',
      detail,
    });
  }
  if (/Unable to find image|No such image|pull access denied|repository does not exist|manifest unknown/i.test(stderr)) {
    return new ServerError({
      code: 'image-missing',
      message: 'The Triton image is not available locally.',
      fix: 'Build it from triton/Dockerfile (the extension offers to), or set the image setting to an image you have.',
      detail,
    });
  }
  return new ServerError({
    code: 'unknown',
    message: `Docker failed${f.exitCode !== undefined ? ` (exit code ${f.exitCode})` : ''}: ${firstLine(stderr) || 'no error message'}`,
    fix: 'Read the details in the log; run the same docker command in a terminal to see the full error.',
    detail,
    exitCode: f.exitCode,
  });
}

/** runc's rlimit numbers (Linux setrlimit resources) in "error setting rlimit type N". */
const RLIMIT_NAMES: Record<string, string> = { 6: 'process count (RLIMIT_NPROC)', 7: 'open files (RLIMIT_NOFILE)' };

/** The container stopped on its own (crash, OOM kill, failed start): its last log lines are the evidence. */
export function containerExitedError(exitCode: number | undefined, logTail: string[]): ServerError {
  const oom = exitCode === 137 ? ' It was killed (exit code 137: out of memory, or killed by a signal).' : '';
  return new ServerError({
    code: 'container-exited',
    message: `The Triton container stopped unexpectedly${exitCode !== undefined ? ` with exit code ${exitCode}` : ''}.${oom}`,
    fix: 'Read the last log lines below; then restart the server. Check GPU memory, the image and the weights path.',
    detail: logTail.join('\n'),
    logTail,
    exitCode,
  });
}

function firstLine(s: string): string {
  return s.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? '';
}
