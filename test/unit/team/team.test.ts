// src/core/team: the keys file, the spec's validation, the rendered nginx.conf and the docker arguments of a team
// deployment (the real nginx and tritonservers run in test/docker/team.test.ts).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  addKey, formatKeysFile, formatTeamSpec, keyDigest, newTeamSpec, parseKeysFile, parseTeamSpec, proxyRunArgs,
  renderNginxConf, replicaRunArgs, revokeKey, TeamKeyError, TeamSpecError, type LocalReplica,
} from '../../../src/core/team';

const root = join(__dirname, '../../..');
const now = new Date('2026-12-05T10:00:00Z');

test('keys: a new key is printed once; the file holds only its HMAC-SHA256 digest and id, and reads back', () => {
  const { entries, key } = addKey([], 'alice', now);
  assert.match(key, /^tcg_[A-Za-z0-9_-]{43}$/);
  const text = formatKeysFile(entries);
  assert.ok(!text.includes(key), 'the key itself is not stored');
  assert.ok(text.includes(`${createHmac('sha256', 'triton-chatglm-team-key-v1').update(key).digest('hex')} "alice";`));
  assert.deepEqual(parseKeysFile(text), [{ digest: keyDigest(key), id: 'alice', note: 'added 2026-12-05' }]);
});

test('keys: one key per id, bad ids and unknown revokes are refused, revoke removes only that id', () => {
  const a = addKey([], 'alice', now).entries;
  const ab = addKey(a, 'bob@example.com', now).entries;
  assert.throws(() => addKey(ab, 'alice', now), TeamKeyError);
  assert.throws(() => addKey(ab, 'a b";', now), /key id/);
  assert.throws(() => revokeKey(ab, 'carol'), /no key with id "carol"/);
  assert.deepEqual(revokeKey(ab, 'alice').map((e) => e.id), ['bob@example.com']);
  assert.throws(() => parseKeysFile('# ok\nnot an entry\n'), /line 2/);
});

test('spec: a wrong field is named; ports and names must not repeat', () => {
  assert.throws(() => parseTeamSpec({ version: 1 }), (e: unknown) => e instanceof TeamSpecError && /name/.test(e.message));
  const s = newTeamSpec({ gpus: [['0'], ['1']] });
  assert.equal(s.replicas.length, 2);
  assert.throws(() => parseTeamSpec({ ...s, replicas: [s.replicas[0], s.replicas[0]] }), /used twice/);
  assert.throws(() => newTeamSpec({ gpus: [['0']], replicaBasePort: 8443 }), /port 8443 is used twice/);
  assert.throws(() => newTeamSpec({ urls: ['not a url'] }), /replica URL/);
  const remote = newTeamSpec({ urls: ['http://gpu-box-2:8000'] });
  assert.deepEqual(remote.replicas, [{ name: 'm0', http: 'gpu-box-2:8000', grpc: 'gpu-box-2:8001' }]);
  assert.deepEqual(parseTeamSpec(JSON.parse(formatTeamSpec(s))), s);
});

test('nginx.conf: keys by digest, streams unbuffered, passive health, only inference APIs proxied, no key logged', () => {
  const s = newTeamSpec({ gpus: [['0'], ['1']], urls: ['10.0.0.7:8000'] });
  const conf = renderNginxConf(s);
  assert.match(conf, /set_hmac_sha256 \$team_key_mac "triton-chatglm-team-key-v1" \$team_key;/);
  assert.match(conf, /include \/etc\/triton-chatglm-team\/keys\.map;/);
  assert.match(conf, /if \(\$team_key_id = ""\) \{ return 401; \}/);
  assert.match(conf, /proxy_buffering off;/);
  assert.match(conf, /proxy_read_timeout 3600s;/);
  assert.match(conf, /server 127\.0\.0\.1:18010 max_fails=1 fail_timeout=10s;/);
  assert.match(conf, /server 10\.0\.0\.7:8001 max_fails=1 fail_timeout=10s;/);
  assert.match(conf, /grpc_pass grpc:\/\/triton_grpc;/);
  assert.match(conf, /listen 127\.0\.0\.1:8444 ssl http2;/);
  // The normalised path is what is sent on (never the raw request URI), and everything else is refused.
  assert.ok(!conf.includes('$request_uri') && !conf.includes('$request '), 'raw request line never proxied or logged');
  assert.match(conf, /location \/ \{ return 403; \}/);
  assert.ok(!/http_authorization[^\n]*log_format|log_format[^\n]*(\$http_authorization|\$team_key[^_])/.test(conf), 'the key is not logged');
  for (const admin of ['repository', 'systemsharedmemory', 'cudasharedmemory', 'trace', 'logging', 'metrics', 'config']) {
    assert.ok(!conf.split('\n').some((l) => l.includes('location ~') && l.includes(admin)), `${admin} is not proxied`);
  }
});

test('nginx.conf: the proxy\'s own error bodies are JSON once nginx has unescaped its single-quoted strings', () => {
  const conf = renderNginxConf(newTeamSpec({}));
  const bodies = [...conf.matchAll(/return (\d{3}) '((?:[^'\\]|\\.)*)';/g)];
  assert.ok(bodies.length >= 6);
  for (const [, status, quoted] of bodies) {
    const text = quoted!.replace(/\\(.)/g, '$1');
    const body = JSON.parse(text) as { error?: string; replicas?: unknown };
    if (status !== '200') assert.match(body.error ?? '', /^team proxy: /);
  }
});

test('docker: replicas publish on 127.0.0.1 only and are not the single-server container; the proxy uses the host network', () => {
  const s = newTeamSpec({ gpus: [['0'], ['1']], image: 'img', weightsPath: '/w/chatglm3-6b', raiseUlimits: false });
  const args = replicaRunArgs(s, s.replicas[1] as LocalReplica, '/deploy', 'k');
  const ports = args.flatMap((a, i) => (args[i - 1] === '-p' ? [a] : []));
  assert.deepEqual(ports, ['127.0.0.1:18010:8000', '127.0.0.1:18011:8001', '127.0.0.1:18012:8002']);
  assert.ok(args.includes('device=1'));
  assert.ok(!args.some((a) => a.startsWith('triton-chatglm.managed')), 'not found as the extension\'s own container');
  assert.ok(!args.includes('memlock=-1'));
  assert.equal(args.at(-1), '--load-model=chatglm3-6b');
  assert.ok(args.some((a) => a.startsWith('--http-restricted-api=')));
  const proxy = proxyRunArgs(s, '/deploy');
  assert.deepEqual(proxy.slice(proxy.indexOf('--network'), proxy.indexOf('--network') + 2), ['--network', 'host']);
  assert.ok(proxy.includes('/deploy/nginx:/etc/triton-chatglm-team:ro'));
});

test('model: the replicas load and mount the spec\'s catalog model; a team.json from before the choice serves the default; an unknown id is named', () => {
  const s = newTeamSpec({ gpus: [['0']], model: 'glm-4-9b-chat', weightsPath: '/w/glm4' });
  const args = replicaRunArgs(s, s.replicas[0] as LocalReplica, '/deploy', 'k');
  assert.equal(args.at(-1), '--load-model=glm-4-9b-chat');
  assert.ok(args.includes('/w/glm4:/weights/glm-4-9b-chat:ro'));
  assert.match(renderNginxConf(s), /Served model: glm-4-9b-chat\./);
  const { model: _, ...old } = newTeamSpec({ gpus: [['0']] });
  assert.equal(parseTeamSpec(old).model, 'chatglm3-6b');
  assert.throws(() => newTeamSpec({ model: 'llama' }), (e: unknown) => e instanceof TeamSpecError && /model: must be one of chatglm3-6b/.test(e.message));
});

test('deploy/team in the repository is what `team init` writes for two GPUs (kept in sync)', () => {
  const spec = parseTeamSpec(JSON.parse(readFileSync(join(root, 'deploy/team/team.json'), 'utf8')));
  assert.deepEqual(spec, newTeamSpec({ gpus: [['0'], ['1']], weightsPath: '/srv/models/chatglm3-6b' }));
  assert.equal(readFileSync(join(root, 'deploy/team/nginx/nginx.conf'), 'utf8'), renderNginxConf(spec));
  assert.deepEqual(parseKeysFile(readFileSync(join(root, 'deploy/team/nginx/keys.map'), 'utf8')), []);
});
