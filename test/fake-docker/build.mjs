// `docker build` and `docker buildx version` of the fake docker, with both builders' output:
// - BuildKit (buildx installed; `--progress plain` accepted): `#N [k/m] STEP` lines on stderr.
// - the legacy builder (failure mode `no-buildx`, or DOCKER_BUILDKIT=0): `Step k/m : STEP` lines on stdout; as on
//   Debian's docker.io without docker-buildx, `--progress` is "unknown flag" and DOCKER_BUILDKIT=1 is refused.
// FAKE_DOCKER_BUILD_FAIL_STEP=k makes the k-th runnable step (FROM/RUN/COPY/ADD/WORKDIR) fail the way each builder
// reports a failing RUN. See README.md.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { markImageBuilt, normalizeImage } from './state.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function buildxVersion(mode, Exit) {
  if (mode === 'no-buildx') throw new Exit(1, `docker: 'buildx' is not a docker command.\nSee 'docker --help'`);
  process.stdout.write('github.com/docker/buildx v0.24.0 d0e5e86\n');
  return 0;
}

export async function build(dir, args, mode, { parseFlags, Exit }) {
  const legacy = mode === 'no-buildx' || process.env.DOCKER_BUILDKIT === '0';
  if (mode === 'no-buildx' && process.env.DOCKER_BUILDKIT === '1') {
    throw new Exit(1, 'ERROR: BuildKit is enabled but the buildx component is missing or broken.\n       Install the buildx component to build images with BuildKit:\n       https://docs.docker.com/go/buildx/');
  }
  const spec = {
    '-t': { key: 'tag', multi: true }, '--tag': { key: 'tag', multi: true }, '-f': { key: 'file' }, '--file': { key: 'file' },
    '--build-arg': { multi: true }, '--pull': { bool: true }, '--no-cache': { bool: true }, '-q': { bool: true },
    ...(legacy ? {} : { '--progress': {} }),
  };
  let parsed;
  try {
    parsed = parseFlags(args, spec, 'build');
  } catch (e) {
    // The docker CLI's flag errors exit 125.
    if (e instanceof Exit) throw new Exit(125, e.stderr);
    throw e;
  }
  const { flags, positional } = parsed;
  if (positional.length !== 1) throw new Exit(1, `ERROR: "docker buildx build" requires exactly 1 argument.\nSee 'docker buildx build --help'.`);
  const context = resolve(positional[0]);
  const dockerfile = flags.file ? resolve(context, flags.file) : join(context, 'Dockerfile');
  if (!existsSync(dockerfile)) throw new Exit(1, `ERROR: failed to build: failed to solve: failed to read dockerfile: open ${flags.file ?? 'Dockerfile'}: no such file or directory`);
  const steps = readFileSync(dockerfile, 'utf8').split('\n').map((l) => l.trim()).filter((l) => /^(FROM|RUN|COPY|ADD|ENV|WORKDIR|USER|ARG|LABEL|ENTRYPOINT|CMD)\b/i.test(l));
  const runnable = steps.filter((s) => /^(FROM|RUN|COPY|ADD|WORKDIR)\b/i.test(s));
  const failAt = Number(process.env.FAKE_DOCKER_BUILD_FAIL_STEP ?? 0);
  const delay = Number(process.env.FAKE_DOCKER_BUILD_STEP_MS ?? 20);
  return legacy ? legacyBuild(dir, flags, runnable, failAt, delay, Exit) : buildkitBuild(dir, flags, runnable, failAt, delay, Exit);
}

async function legacyBuild(dir, flags, runnable, failAt, delay, Exit) {
  const log = (s) => process.stdout.write(`${s}\n`);
  log('Sending build context to Docker daemon  4.096kB');
  for (const [i, s] of runnable.entries()) {
    await sleep(delay);
    log(`Step ${i + 1}/${runnable.length} : ${s}`);
    if (i + 1 === failAt) {
      log(' ---> Running in 3f1c2a9d8e7b');
      log('fake docker: this step fails (FAKE_DOCKER_BUILD_FAIL_STEP)');
      throw new Exit(1, `The command '/bin/sh -c ${s.replace(/^RUN\s+/i, '')}' returned a non-zero code: 1`);
    }
    log(` ---> ${(i + 1).toString(16).padStart(12, 'a')}`);
  }
  log('Successfully built aaaaaaaaaaaa');
  for (const tag of flags.tag ?? []) { markImageBuilt(dir, tag); log(`Successfully tagged ${normalizeImage(tag)}`); }
  return 0;
}

async function buildkitBuild(dir, flags, runnable, failAt, delay, Exit) {
  const log = (s) => process.stderr.write(`${s}\n`);
  let n = 1;
  log(`#${n} [internal] load build definition from ${flags.file ?? 'Dockerfile'}`); log(`#${n} DONE 0.0s`); n++;
  for (const [i, s] of runnable.entries()) {
    await sleep(delay);
    const step = `[${i + 1}/${runnable.length}] ${s}`;
    log(`#${n} ${step}`);
    if (i + 1 === failAt) {
      const cmd = s.replace(/^RUN\s+/i, '');
      log(`#${n} 0.2 fake docker: this step fails (FAKE_DOCKER_BUILD_FAIL_STEP)`);
      log(`#${n} ERROR: process "/bin/sh -c ${cmd}" did not complete successfully: exit code: 1`);
      log('------'); log(` > ${step}:`); log('------');
      throw new Exit(1, `ERROR: failed to solve: process "/bin/sh -c ${cmd}" did not complete successfully: exit code: 1`);
    }
    log(`#${n} DONE 0.1s`); n++;
  }
  for (const tag of flags.tag ?? []) {
    markImageBuilt(dir, tag);
    log(`#${n} exporting to image`); log(`#${n} naming to docker.io/library/${normalizeImage(tag)} done`); log(`#${n} DONE 0.1s`); n++;
  }
  return 0;
}
