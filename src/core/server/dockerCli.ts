// Runs the docker client with execa and argument arrays (never a shell). Failures become typed ServerErrors;
// every command is reported to `onCommand` with the admin key redacted.
import type { ResultPromise } from 'execa' with { 'resolution-mode': 'import' };
import { classifyDockerFailure, ServerError } from './errors';
import { formatCommand } from './dockerArgs';

export interface DockerResult {
  stdout: string;
  stderr: string;
  /** Undefined when the binary could not be started at all. */
  exitCode: number | undefined;
  /** Node errno of a failed spawn (ENOENT: no such binary). */
  errno: string | undefined;
  /** Killed by our `timeoutMs`. */
  timedOut?: boolean;
  /** Killed because the caller's signal aborted. */
  canceled?: boolean;
}

export interface DockerCliOptions {
  /** Extra environment for the docker client (DOCKER_HOST, FAKE_DOCKER_STATE in tests...), over this process's. */
  env?: NodeJS.ProcessEnv;
  /** Receives each command line we run, secret-free, for the output channel / CLI verbose log. */
  onCommand?: (line: string) => void;
}

export interface ExecOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Redacted from the logged command line. */
  secret?: string;
}

export interface LineStream {
  /** Resolves with docker's exit code when the stream ends (undefined when it could not start). */
  readonly done: Promise<number | undefined>;
  /** Stops following: kills the docker client process (not the container). Idempotent. */
  dispose(): void;
}

// execa 9 is ESM-only and this package compiles to CommonJS: load it lazily (esbuild bundles it either way).
type ExecaModule = typeof import('execa', { with: { 'resolution-mode': 'import' } });
let execaModule: Promise<ExecaModule> | undefined;
export function loadExeca(): Promise<ExecaModule> {
  execaModule ??= import('execa');
  return execaModule;
}

export class DockerCli {
  constructor(readonly dockerPath: string, private readonly options: DockerCliOptions = {}) {}

  /** Runs docker and returns what happened, failure or not. */
  async run(args: readonly string[], opts: ExecOptions = {}): Promise<DockerResult> {
    const { execa } = await loadExeca();
    this.options.onCommand?.(formatCommand(this.dockerPath, args, opts.secret));
    const r = await execa(this.dockerPath, [...args], {
      reject: false,
      stdin: 'ignore',
      env: this.options.env,
      extendEnv: true,
      cancelSignal: opts.signal,
      timeout: opts.timeoutMs,
      stripFinalNewline: true,
    });
    const errno = typeof r.code === 'string' && r.exitCode === undefined && !r.timedOut && !r.isCanceled ? r.code : undefined;
    return { stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), exitCode: r.exitCode, errno, timedOut: r.timedOut, canceled: r.isCanceled };
  }

  /** Runs docker; a non-zero exit throws the classified ServerError. */
  async exec(args: readonly string[], opts: ExecOptions = {}): Promise<DockerResult> {
    const r = await this.run(args, opts);
    if (r.exitCode !== 0) throw this.failure(r, opts.secret);
    return r;
  }

  /** The typed error for a failed call (docker's stderr, with `secret` redacted, is kept as detail). */
  failure(r: DockerResult, secret = ''): ServerError {
    const stderr = secret ? r.stderr.split(secret).join('<redacted>') : r.stderr;
    if (r.canceled) return new ServerError({ code: 'cancelled', message: 'Cancelled.', fix: 'Run the command again when ready.', detail: stderr || undefined });
    if (r.timedOut) {
      return new ServerError({
        code: 'daemon-unreachable',
        message: 'Docker did not answer in time.',
        fix: 'Check that the Docker daemon is healthy (`docker info`), then try again.',
        detail: stderr || undefined,
      });
    }
    return classifyDockerFailure({ errno: r.errno, exitCode: r.exitCode, stderr, dockerPath: this.dockerPath });
  }

  /** Streams stdout and stderr of a long-running docker command line by line (`logs -f`, `build`). */
  stream(args: readonly string[], onLine: (line: string) => void, opts: { signal?: AbortSignal; secret?: string; env?: NodeJS.ProcessEnv } = {}): LineStream {
    let child: ResultPromise | undefined;
    let disposed = false;
    const done = (async () => {
      const { execa } = await loadExeca();
      if (disposed) return undefined;
      this.options.onCommand?.(formatCommand(this.dockerPath, args, opts.secret));
      child = execa(this.dockerPath, [...args], {
        reject: false,
        stdin: 'ignore',
        buffer: false,
        env: { ...this.options.env, ...opts.env },
        extendEnv: true,
        cancelSignal: opts.signal,
      });
      const out = lineSplitter(onLine);
      const err = lineSplitter(onLine);
      child.stdout?.on('data', (d: Buffer) => out.push(d));
      child.stderr?.on('data', (d: Buffer) => err.push(d));
      const r = await child;
      out.end();
      err.end();
      return r.exitCode;
    })();
    return {
      done,
      dispose() {
        disposed = true;
        child?.kill();
      },
    };
  }
}

/** Splits a byte stream into UTF-8 lines (a multi-byte character split across chunks stays whole). */
function lineSplitter(onLine: (line: string) => void): { push(d: Buffer): void; end(): void } {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  const emit = (text: string) => {
    pending += text;
    const parts = pending.split(/\r?\n/);
    pending = parts.pop() ?? '';
    for (const p of parts) onLine(p);
  };
  return {
    push: (d) => emit(decoder.decode(d, { stream: true })),
    end: () => {
      emit(decoder.decode());
      if (pending) onLine(pending);
      pending = '';
    },
  };
}
