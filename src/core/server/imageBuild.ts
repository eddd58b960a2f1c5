// `docker build` of triton/Dockerfile with whichever builder this Docker has, and a failure that names its step.
import { BuildStepTracker } from './buildLog';
import { buildEnv, buildImageArgs, buildxVersionArgs, type ImageBuilder } from './dockerArgs';
import type { DockerCli } from './dockerCli';
import { ServerError } from './errors';
import { throwIfAborted } from './liveness';

/** BuildKit when the buildx plugin answers; the legacy builder otherwise (docker.io without docker-buildx). */
export async function detectBuilder(docker: DockerCli, signal?: AbortSignal): Promise<ImageBuilder> {
  const r = await docker.run(buildxVersionArgs(), { signal, timeoutMs: 30_000 });
  return r.exitCode === 0 ? 'buildkit' : 'legacy';
}

export async function buildImage(docker: DockerCli, image: string, contextDir: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const builder = await detectBuilder(docker, signal);
  throwIfAborted(signal);
  const tail: string[] = [];
  const steps = new BuildStepTracker();
  const stream = docker.stream(buildImageArgs(image, contextDir, builder), (line) => {
    steps.push(line);
    tail.push(line);
    if (tail.length > 40) tail.shift();
    onLine(line);
  }, { signal, env: buildEnv(builder) });
  const code = await stream.done;
  throwIfAborted(signal);
  if (code === 0) return;
  const classified = docker.failure({ stdout: '', stderr: tail.join('\n'), exitCode: code, errno: code === undefined ? 'ENOENT' : undefined });
  if (classified.code !== 'unknown') throw classified;
  const step = steps.failedStep();
  throw new ServerError({
    code: 'build-failed',
    message: step ? `Building the image "${image}" failed at ${step}` : `Building the image "${image}" failed.`,
    fix: 'Read the build log above the failing step; fix the Dockerfile or network access, then build again.',
    detail: tail.join('\n'),
    exitCode: code,
    buildStep: step,
  });
}
