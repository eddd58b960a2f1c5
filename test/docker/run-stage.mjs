#!/usr/bin/env node
// The `docker` stage of test/run-all.mjs: starts the private dockerd (test/docker/daemon.mjs), builds the CPU
// serving image when its content hash is new (test/docker/image.mjs), runs test/docker/*.test.ts against them, then
// the extension's journeys in code-server against the same daemon (test/e2e/realDocker.mjs: `run.mjs --only=docker`,
// its JUnit cases added to FILE), and stops the daemon, also when the tests fail or the stage is interrupted.
//   node test/docker/run-stage.mjs [--junit=FILE] [--no-e2e] [test files...]   (named files: no e2e journeys)
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../support/triton-process.mjs';
import { client, startDaemon, stateDir, stopDaemon } from './daemon.mjs';
import { ensureImage, imageSizeMB } from './image.mjs';

const args = process.argv.slice(2);
const junit = args.find((a) => a.startsWith('--junit='))?.slice('--junit='.length);
const named = args.filter((a) => !a.startsWith('--'));
const e2e = !named.length && !args.includes('--no-e2e');
const files = named.length ? named : readdirSync(join(projectRoot, 'test/docker'))
  .filter((n) => n.endsWith('.test.ts')).sort().map((n) => relative(projectRoot, join(projectRoot, 'test/docker', n)));

let child;
let stopping;
async function shutdown() {
  stopping ??= (async () => {
    child?.kill('SIGTERM');
    await stopDaemon();
  })();
  return stopping;
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { shutdown().finally(() => process.exit(130)); });

const started = Date.now();
const secs = (from) => ((Date.now() - from) / 1000).toFixed(0);
let status = 1;
try {
  const docker = await startDaemon();
  console.log(`docker stage: private dockerd ${docker.paths.socket} (state ${stateDir()})`);
  const imageStarted = Date.now();
  const image = ensureImage(docker, stateDir());
  console.log(`docker stage: image ${image} ready in ${secs(imageStarted)} s, ${imageSizeMB(docker, image)} MB`);
  const testsStarted = Date.now();
  const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
  if (junit) reporters.push('--test-reporter=junit', `--test-reporter-destination=${junit}`);
  child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...reporters, ...files], {
    cwd: projectRoot, stdio: 'inherit', env: { ...process.env, TRITON_CHATGLM_TEST_IMAGE: image },
  });
  status = await new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  console.log(`docker stage: tests ran in ${secs(testsStarted)} s`);
  if (e2e) {
    const journeysStarted = Date.now();
    const e2eJunit = junit ? `${junit.replace(/\.xml$/, '')}-e2e.xml` : undefined;
    const { env } = client();
    child = spawn(process.execPath, [join(projectRoot, 'test/e2e/run.mjs'), '--only=docker', ...(e2eJunit ? [`--junit=${e2eJunit}`] : [])], {
      cwd: projectRoot, stdio: 'inherit', env: { ...env, TRITON_CHATGLM_TEST_IMAGE: image },
    });
    const journeys = await new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
    if (status === 0) status = journeys;
    if (junit && e2eJunit) mergeJUnit(junit, e2eJunit);
    console.log(`docker stage: the extension's journeys ran in ${secs(journeysStarted)} s`);
  }
  console.log(`docker stage: ${secs(started)} s`);
} catch (e) {
  console.error(`docker stage: ${e instanceof Error ? e.message : String(e)}`);
} finally {
  await shutdown();
}
process.exit(status);

/** Adds the journeys' test suite to the stage's JUnit file (test/run-all.mjs counts the stage's one file). */
function mergeJUnit(into, from) {
  if (!existsSync(from)) return;
  const suites = /<testsuite\b[\s\S]*<\/testsuite>/.exec(readFileSync(from, 'utf8'))?.[0];
  rmSync(from, { force: true });
  if (!suites) return;
  const text = existsSync(into) ? readFileSync(into, 'utf8') : '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n</testsuites>\n';
  const at = text.lastIndexOf('</testsuites>');
  writeFileSync(into, at < 0 ? `${text}${suites}\n` : `${text.slice(0, at)}${suites}\n${text.slice(at)}`);
}
