// Build Serving Image with either builder (issue #27): BuildKit through buildx, or the legacy builder of a docker
// without buildx (Debian's docker.io), which refuses `--progress`; a failing step is named in the error.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ContainerManager, isServerError, resolveSettings } from '../../../src/core/server';
import { createFakeDocker, type FakeDockerFailMode } from '../../fake-docker/harness';

function setup(t: { after(fn: () => void): void }, env: NodeJS.ProcessEnv = {}) {
  const fake = createFakeDocker({ FAKE_DOCKER_BUILD_STEP_MS: '0', FAKE_DOCKER_IMAGES: '', ...env });
  const tmp = mkdtempSync(join(tmpdir(), 'image-build-'));
  t.after(() => { fake.cleanup(); rmSync(tmp, { recursive: true, force: true }); });
  const context = join(tmp, 'ctx');
  mkdirSync(context);
  writeFileSync(join(context, 'Dockerfile'), 'FROM nvcr.io/nvidia/tritonserver:24.10-py3\nCOPY requirements-serving.txt /tmp/\nRUN pip install -r /tmp/requirements-serving.txt\n');
  const commands: string[] = [];
  const manager = new ContainerManager(resolveSettings({ dockerPath: fake.dockerPath, weightsPath: tmp, repositoryPath: tmp, image: 'chatglm-build-test:1' }), { env: fake.env, onCommand: (l) => commands.push(l) });
  return { fake, manager, context, commands };
}

const builds: { mode: FakeDockerFailMode | undefined; progress: boolean; stepLine: RegExp }[] = [
  { mode: undefined, progress: true, stepLine: /^#\d+ \[2\/3\] COPY/ },
  { mode: 'no-buildx', progress: false, stepLine: /^Step 2\/3 : COPY/ },
];

for (const b of builds) {
  test(`build with ${b.mode ?? 'buildx'}: ${b.progress ? 'BuildKit with --progress plain' : 'the legacy builder, no --progress'}; the image exists after`, async (t) => {
    const { fake, manager, context, commands } = setup(t);
    fake.setFail(b.mode);
    assert.equal(await manager.imagePresent().catch(() => false), false);
    const lines: string[] = [];
    await manager.buildImage(context, (l) => lines.push(l));
    assert.ok(lines.some((l) => b.stepLine.test(l)), lines.join('\n'));
    const build = commands.find((c) => / build /.test(c)) ?? '';
    assert.equal(build.includes('--progress'), b.progress, build);
    assert.equal(fake.docker(['image', 'inspect', 'chatglm-build-test:1']).status, 0);
  });

  test(`a failing step is named (${b.mode ?? 'buildx'})`, async (t) => {
    const { fake, manager, context } = setup(t, { FAKE_DOCKER_BUILD_FAIL_STEP: '3' });
    fake.setFail(b.mode);
    const e = await manager.buildImage(context, () => undefined).then(() => undefined, (x: unknown) => x);
    assert.ok(isServerError(e), String(e));
    assert.equal(e.code, 'build-failed');
    assert.match(e.message, /failed at (Step 3\/3 : |\[3\/3\] )RUN pip install -r \/tmp\/requirements-serving\.txt/);
    assert.equal(e.buildStep?.endsWith('RUN pip install -r /tmp/requirements-serving.txt'), true);
  });
}

test('the fake refuses what a docker without buildx refuses', (t) => {
  const { fake, context } = setup(t);
  fake.setFail('no-buildx');
  const buildx = fake.docker(['buildx', 'version']);
  assert.equal(buildx.status, 1);
  assert.match(buildx.stderr, /'buildx' is not a docker command/);
  const progress = fake.docker(['build', '--progress', 'plain', '-t', 'x:1', context]);
  assert.equal(progress.status, 125);
  assert.match(progress.stderr, /unknown flag: 'progress'|unknown flag: --progress/);
});
