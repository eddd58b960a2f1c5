// A Hub cache snapshot holds links into ../../blobs: the container gets the whole repository folder read-only and
// the server the snapshot inside it; any other weights folder is mounted as before. The fake docker's view of the
// weights (test/fake-docker/weights-view.mjs) resolves links as the container would, so a snapshot mounted alone
// is seen broken there as it would be in a real container.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildRunArgs, CONTAINER_WEIGHTS_DIR, resolveSettings, weightsMount } from '../../../src/core/server';
import { toModelSettings } from '../../../src/core/settings/settingsMapping';
import { parseSettings } from '../../../src/core/settings/settingsParser';

const tmp = mkdtempSync(join(tmpdir(), 'weights-mount-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const repoDir = join(tmp, 'hub', 'models--THUDM--chatglm3-6b');
const snapshot = join(repoDir, 'snapshots', 'a'.repeat(40));

test('a cache snapshot: the repository folder is mounted read-only, the server pointed at the snapshot in it', () => {
  const m = weightsMount(snapshot);
  assert.deepEqual(m, { source: repoDir, target: '/weights/hub-repository', weightsPath: `/weights/hub-repository/snapshots/${'a'.repeat(40)}` });
  const args = buildRunArgs(resolveSettings({ weightsPath: snapshot, repositoryPath: tmp }), 'k');
  assert.ok(args.includes(`${repoDir}:/weights/hub-repository:ro`));
  assert.ok(!args.some((a) => a.startsWith(`${snapshot}:`)), 'the snapshot alone is not mounted');
  const s = parseSettings(() => undefined, true).settings;
  s.weightsPath = snapshot;
  assert.equal(toModelSettings(s).weightsPath, m.weightsPath, 'config.pbtxt names the snapshot inside the mount');
});

test('any other folder is mounted as before', () => {
  assert.deepEqual(weightsMount('/data/chatglm3-6b'), { source: '/data/chatglm3-6b', target: CONTAINER_WEIGHTS_DIR, weightsPath: CONTAINER_WEIGHTS_DIR });
  const args = buildRunArgs(resolveSettings({ weightsPath: '/data/chatglm3-6b', repositoryPath: tmp }), 'k');
  assert.ok(args.includes(`/data/chatglm3-6b:${CONTAINER_WEIGHTS_DIR}:ro`));
});

test('the fake docker sees the links as a container would: whole repository mounted → readable; snapshot alone → broken', async () => {
  const view = (await import(pathToFileURL(join(__dirname, '../../fake-docker/weights-view.mjs')).href)) as {
    unreadableInContainer(p: string, v: { source: string; target: string }[]): string[];
    hostWeightsPath(text: string, v: { source: string; target: string }[]): string | undefined;
  };
  mkdirSync(join(repoDir, 'blobs'), { recursive: true });
  mkdirSync(snapshot, { recursive: true });
  writeFileSync(join(repoDir, 'blobs', 'abc'), '{}');
  symlinkSync('../../blobs/abc', join(snapshot, 'config.json'));
  const m = weightsMount(snapshot);
  assert.deepEqual(view.unreadableInContainer(m.weightsPath, [{ source: m.source, target: m.target }]), []);
  assert.deepEqual(view.unreadableInContainer(CONTAINER_WEIGHTS_DIR, [{ source: snapshot, target: CONTAINER_WEIGHTS_DIR }]), ['config.json']);
  const config = `parameters { key: "weights_path" value { string_value: "${m.weightsPath}" } }`;
  assert.equal(view.hostWeightsPath(config, [{ source: m.source, target: m.target }]), snapshot);
});
