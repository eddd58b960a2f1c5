import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isLoopback } from '../../../src/core/server/settings';
import { blocksStart, changeEffect, parseSettings, type InspectedValue } from '../../../src/core/settings/settingsParser';
import { MAX_REPETITION_PENALTY, MIN_REPETITION_PENALTY } from '../../../src/core/triton/chatglm';
import { restrictedKeys, SETTINGS, SETTING_KEYS, type SettingKey } from '../../../src/core/settings/settingsSchema';

const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: { configuration: Array<{ id: string; title: string; order: number; properties: Record<string, DeclaredSetting> }> };
};

interface DeclaredSetting { default: unknown; scope: string; type: string; order: number; description?: string; markdownDescription?: string }
const nls = (file: string) => JSON.parse(readFileSync(join(__dirname, '../../..', file), 'utf8')) as Record<string, string>;
/** Every declared setting, across the categories. */
const declared = (): Record<string, DeclaredSetting> => Object.assign({}, ...pkg.contributes.configuration.map((c) => c.properties));

const inspector = (values: Partial<Record<SettingKey, InspectedValue>>) => (key: SettingKey) => values[key];

test('defaults when nothing is set', () => {
  const { settings, problems } = parseSettings(() => undefined, true);
  assert.deepEqual(problems, []);
  assert.equal(settings.bindAddress, '127.0.0.1');
  assert.equal(settings.serverMode, 'managed');
  assert.equal(settings.explainMaxConcurrency, 8);
  assert.deepEqual(settings.gpuIds, []);
});

test('user values are validated; an invalid one falls back to the default and is reported', () => {
  const { settings, problems } = parseSettings(inspector({
    httpPort: { globalValue: 18000 },
    maxBatchSize: { globalValue: 0 },
    image: { globalValue: '--privileged' },
    externalHeaders: { globalValue: { 'x-ok': 'a', 'bad header': 'b' } },
    temperature: { globalValue: 0.2 },
  }), true);
  assert.equal(settings.httpPort, 18000);
  assert.equal(settings.temperature, 0.2);
  assert.equal(settings.maxBatchSize, 8);
  assert.equal(settings.image, SETTINGS.image.default);
  assert.deepEqual(settings.externalHeaders, {});
  assert.deepEqual(problems.map((p) => `${p.key}:${p.kind}`).sort(), ['externalHeaders:invalid', 'image:invalid', 'maxBatchSize:invalid']);
});

test('repetitionPenalty takes the range the model accepts (a tiny one is refused here, not by a failing request)', () => {
  const valid = SETTINGS.repetitionPenalty.validate as (v: unknown) => boolean;
  assert.deepEqual([1e-38, 0.0099, 0, 10.5].map(valid), [false, false, false, false]);
  assert.deepEqual([MIN_REPETITION_PENALTY, 1, MAX_REPETITION_PENALTY].map(valid), [true, true, true]);
  const declaredRange = declared()['tritonChatglm.repetitionPenalty'] as DeclaredSetting & { minimum?: number; maximum?: number };
  assert.deepEqual([declaredRange.minimum, declaredRange.maximum], [MIN_REPETITION_PENALTY, MAX_REPETITION_PENALTY]);
});

test('header values cannot smuggle a second header line', () => {
  const { settings, problems } = parseSettings(inspector({ externalHeaders: { globalValue: { authorization: 'Bearer x\r\nx-evil: 1' } } }), true);
  assert.deepEqual(settings.externalHeaders, {});
  assert.equal(problems[0]?.kind, 'invalid');
});

test('untrusted workspace: restricted settings come from user settings only', () => {
  const { settings, problems } = parseSettings(inspector({
    dockerPath: { globalValue: '/usr/bin/docker', workspaceValue: '/tmp/evil/docker' },
    weightsPath: { workspaceFolderValue: '/home/me/.ssh' },
    externalUrl: { workspaceValue: 'http://attacker.example' },
    temperature: { globalValue: 0.5, workspaceValue: 0.1 },
  }), false);
  assert.equal(settings.dockerPath, '/usr/bin/docker');
  assert.equal(settings.weightsPath, '');
  assert.equal(settings.externalUrl, SETTINGS.externalUrl.default);
  assert.equal(settings.temperature, 0.1, 'an unrestricted setting still follows the workspace');
  const ignored = problems.filter((p) => p.kind === 'ignoredWorkspaceValue');
  assert.deepEqual(ignored.map((p) => p.key).sort(), ['dockerPath', 'externalUrl', 'weightsPath']);
  assert.ok(ignored.every((p) => p.kind === 'ignoredWorkspaceValue' && p.untrusted));
});

test('trusted workspace: machine-scoped settings still ignore workspace values (like VS Code), window ones use them', () => {
  const { settings, problems } = parseSettings(inspector({
    httpPort: { globalValue: 9000, workspaceValue: 9100 },
    historyTurns: { globalValue: 4, workspaceFolderValue: 2, workspaceValue: 3 },
  }), true);
  assert.equal(settings.httpPort, 9000);
  assert.equal(settings.historyTurns, 2, 'folder beats workspace beats user');
  assert.deepEqual(problems, [{ key: 'httpPort', kind: 'ignoredWorkspaceValue', untrusted: false }]);
});

test('equal ports are a problem that blocks a start', () => {
  const { problems } = parseSettings(inspector({ grpcPort: { globalValue: 8000 } }), true);
  assert.deepEqual(blocksStart(problems), { key: 'grpcPort', kind: 'portConflict', with: 'httpPort', value: 8000 });
  assert.equal(blocksStart(parseSettings(() => undefined, true).problems), undefined);
});

test('returned objects are copies (editing them cannot change the defaults)', () => {
  const a = parseSettings(() => undefined, true).settings;
  a.gpuIds.push('1');
  assert.deepEqual(parseSettings(() => undefined, true).settings.gpuIds, []);
});

test('change effects: restart beats reload beats reconnect', () => {
  const changed = (...keys: string[]) => (k: string) => keys.includes(k);
  assert.deepEqual(changeEffect(changed('tritonChatglm.maxBatchSize', 'tritonChatglm.streaming')), { effect: 'reloadModel', keys: ['maxBatchSize', 'streaming'] });
  assert.equal(changeEffect(changed('tritonChatglm.maxBatchSize', 'tritonChatglm.httpPort')).effect, 'restartServer');
  assert.equal(changeEffect(changed('tritonChatglm.externalUrl')).effect, 'reconnect');
  assert.equal(changeEffect(changed('tritonChatglm.temperature')).effect, 'none');
  assert.deepEqual(changeEffect(changed('editor.fontSize')), { effect: 'none', keys: [] });
});

test('loopback detection', () => {
  assert.ok(isLoopback('127.0.0.1'));
  assert.ok(isLoopback('::1'));
  assert.ok(!isLoopback('0.0.0.0'));
  assert.ok(!isLoopback('192.168.1.2'));
});

test('package.json declares every setting with the same default and scope, and restricts the right ones', () => {
  const props = declared();
  assert.deepEqual(Object.keys(props).sort(), SETTING_KEYS.map((k) => `tritonChatglm.${k}`).sort());
  for (const key of SETTING_KEYS) {
    const p = props[`tritonChatglm.${key}`]!;
    assert.deepEqual(p.default, SETTINGS[key].default, `${key} default`);
    assert.equal(p.scope, SETTINGS[key].scope, `${key} scope`);
    assert.ok((SETTINGS[key].validate as (v: unknown) => boolean)(p.default), `${key} default is valid`);
  }
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited');
  assert.deepEqual([...pkg.capabilities.untrustedWorkspaces.restrictedConfigurations].sort(), restrictedKeys().sort());
  for (const k of ['tritonChatglm.dockerPath', 'tritonChatglm.weightsPath', 'tritonChatglm.externalUrl', 'tritonChatglm.bindAddress']) {
    assert.ok(restrictedKeys().includes(k), k);
  }
});

test('settings come in categories (Setup first, with Model and Weights Path first in it), each with a markdown description', () => {
  const cats = pkg.contributes.configuration;
  assert.deepEqual(cats.map((c) => c.id), ['tritonChatglm.setup', 'tritonChatglm.server', 'tritonChatglm.generation', 'tritonChatglm.explain', 'tritonChatglm.external', 'tritonChatglm.completions']);
  assert.deepEqual(cats.map((c) => c.order), [1, 2, 3, 4, 5, 6]);
  const setup = Object.entries(cats[0]!.properties).sort(([, a], [, b]) => a.order - b.order);
  assert.deepEqual(setup.slice(0, 2).map(([k]) => k), ['tritonChatglm.model', 'tritonChatglm.weightsPath']);
  assert.ok(Object.keys(cats[4]!.properties).every((k) => k.startsWith('tritonChatglm.external')), 'external-server settings together');
  const en = nls('package.nls.json');
  const zh = nls('package.nls.zh-cn.json');
  for (const [key, p] of Object.entries(declared())) {
    // Plain descriptions show Markdown literally (`code` with its backticks): every description is Markdown.
    assert.equal(p.description, undefined, `${key} has a plain description`);
    const ref = /^%(.+)%$/.exec(p.markdownDescription ?? '')?.[1];
    assert.ok(ref, `${key} has a localized markdownDescription`);
    for (const [lang, table] of [['en', en], ['zh-cn', zh]] as const) {
      const text: string | undefined = table[ref];
      assert.ok(text, `${key}: ${lang}`);
      assert.equal((text.match(/`/g) ?? []).length % 2, 0, `${key} (${lang}): unbalanced backticks`);
    }
    assert.ok(!/[\u4e00-\u9fff][,:;()]|[,:;(][\u4e00-\u9fff]/.test(zh[ref] ?? ''), `${key}: half-width punctuation next to Chinese text`);
  }
  // Folder-ish settings say how to pick them.
  assert.match(en['config.weightsPath.description'] ?? '', /\(command:tritonChatglm\.chooseWeightsFolder\)/);
  assert.match(zh['config.weightsPath.description'] ?? '', /\(command:tritonChatglm\.chooseWeightsFolder\)/);
  assert.match(en['config.dockerPath.description'] ?? '', /command -v docker/);
});
