import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sessionSettingsFromCli, settingsFromCli, type CliIo } from '../../../src/cli/cliSession';
import { HistoryFileError, readHistory, writeHistory } from '../../../src/cli/historyFile';
import { defaultRepositoryPath, ENV_VARS, parseCli, UsageError } from '../../../src/cli/options';
import { EXIT, reportError } from '../../../src/cli/reportError';
import { ServerError } from '../../../src/core/server';
import { TritonError } from '../../../src/core/triton';
import { toModelSettings } from '../../../src/core/settings/settingsMapping';

const modelSettingsFor = (cfg: ReturnType<typeof parseCli>) => toModelSettings(settingsFromCli(cfg));

const env = { HOME: '/home/u' };

test('flags: ports (gRPC and metrics follow --port), gpus, paths resolved against cwd', () => {
  const c = parseCli(['start', '--port', '18000', '--gpus', '1,2', '--weights', 'w', '--docker', '/x/docker', '--image', 'img:1'], env, '/work');
  assert.equal(c.command, 'start');
  assert.deepEqual([c.httpPort, c.grpcPort, c.metricsPort], [18000, 18001, 18002]);
  assert.deepEqual(c.gpuIds, ['1', '2']);
  assert.equal(c.weightsPath, '/work/w');
  assert.equal(c.dockerPath, '/x/docker');
  assert.equal(c.image, 'img:1');
  assert.equal(c.preflight, true);
  assert.equal(c.repositoryPath, '/home/u/.local/share/triton-chatglm/model_repository');
  const explicit = parseCli(['start', '--port', '9000', '--grpc-port', '9100', '--metrics-port', '9200', '--gpus', 'all', '--no-preflight'], env);
  assert.deepEqual([explicit.httpPort, explicit.grpcPort, explicit.metricsPort], [9000, 9100, 9200]);
  assert.equal(explicit.gpuIds, 'all');
  assert.equal(explicit.preflight, false);
});

test('every option has an environment equivalent; a flag wins over the environment', () => {
  const e = {
    ...env,
    [ENV_VARS.docker]: '/env/docker', [ENV_VARS.image]: 'env:img', [ENV_VARS.container]: 'envname', [ENV_VARS.port]: '7000',
    [ENV_VARS['bind-address']]: '0.0.0.0', [ENV_VARS.gpus]: '3', [ENV_VARS['shm-size']]: '4g', [ENV_VARS.weights]: '/env/w',
    [ENV_VARS['repository-source']]: '/env/src', [ENV_VARS.repository]: '/env/repo', [ENV_VARS['max-batch-size']]: '4',
    [ENV_VARS.url]: 'http://h:1/', [ENV_VARS['admin-key']]: 'k', [ENV_VARS.history]: '/env/h.json',
  };
  const c = parseCli(['status'], e);
  assert.equal(c.dockerPath, '/env/docker');
  assert.equal(c.image, 'env:img');
  assert.equal(c.containerName, 'envname');
  assert.deepEqual([c.httpPort, c.grpcPort, c.metricsPort], [7000, 7001, 7002]);
  assert.equal(c.bindAddress, '0.0.0.0');
  assert.deepEqual(c.gpuIds, ['3']);
  assert.equal(c.shmSize, '4g');
  assert.equal(c.weightsPath, '/env/w');
  assert.equal(c.repositorySource, '/env/src');
  assert.equal(c.repositoryPath, '/env/repo');
  assert.equal(c.maxBatchSize, 4);
  assert.equal(c.url, 'http://h:1');
  assert.equal(c.adminKey, 'k');
  assert.equal(c.historyFile, '/env/h.json');
  assert.equal(parseCli(['status', '--image', 'flag:img'], e).image, 'flag:img');
});

test('chat takes the message words; sampling options are range-checked', () => {
  const c = parseCli(['chat', 'Hello', 'world', '--temperature', '0.5', '--top-p', '0.9', '--max-new-tokens', '64', '--history', 'h.json'], env, '/w');
  assert.equal(c.prompt, 'Hello world');
  assert.equal(c.temperature, 0.5);
  assert.equal(c.topP, 0.9);
  assert.equal(c.maxNewTokens, 64);
  assert.equal(c.historyFile, '/w/h.json');
  const usage = (argv: string[], re: RegExp) => assert.throws(() => parseCli(argv, env), (e: Error) => e instanceof UsageError && re.test(e.message));
  usage(['chat'], /needs a message/);
  usage(['chat', 'x', '--temperature', '3'], /--temperature/);
  usage(['chat', 'x', '--max-new-tokens', '1.5'], /whole number/);
  const more = parseCli(['chat', 'x', '--top-k', '40', '--repetition-penalty', '1.1', '--seed', '7'], env);
  assert.deepEqual([more.topK, more.repetitionPenalty, more.seed], [40, 1.1, 7]);
  assert.deepEqual([parseCli(['chat', 'x'], env).topK, parseCli(['chat', 'x'], env).seed], [undefined, undefined]);
  usage(['chat', 'x', '--top-k', '-1'], /--top-k/);
  usage(['chat', 'x', '--repetition-penalty', '0'], /--repetition-penalty must be a number from 0.01 to 10/);
  usage(['chat', 'x', '--repetition-penalty', '1e-38'], /--repetition-penalty must be a number from 0.01 to 10/);
  usage(['chat', 'x', '--repetition-penalty', '11'], /--repetition-penalty/);
  usage(['chat', 'x', '--seed', '1.5'], /--seed must be a whole number/);
  usage(['start', '--port', 'abc'], /--port/);
  usage(['start', '--port', '70000'], /--port/);
  usage(['frobnicate'], /Unknown command/);
  usage(['status', 'extra'], /takes no arguments/);
  usage(['status', '--no-such-flag'], /no-such-flag/);
  usage(['status', '--url', 'ftp://x'], /--url/);
  usage(['start', '--gpus', ','], /--gpus/);
  usage([], /Missing command/);
});

test('--engine (or TRITON_CHATGLM_ENGINE) sets the engine setting; only native is offered (the HF engine is test-only)', () => {
  assert.equal(settingsFromCli(parseCli(['load', '--engine', 'native'], env)).engine, 'native');
  assert.equal(settingsFromCli(parseCli(['load'], env)).engine, 'native', 'the default');
  for (const engine of ['hf', 'vllm']) {
    assert.throws(() => parseCli(['load', '--engine', engine], env), (e: unknown) => e instanceof UsageError && /--engine must be "native"/.test(e.message));
  }
});

test('--model (or TRITON_CHATGLM_MODEL) chooses the catalog model, which names the entry the session addresses', () => {
  assert.equal(settingsFromCli(parseCli(['load'], env)).model, 'chatglm3-6b', 'the default');
  assert.equal(settingsFromCli(parseCli(['load', '--model', 'glm-4-9b-chat'], env)).model, 'glm-4-9b-chat');
  assert.equal(settingsFromCli(parseCli(['stats'], { ...env, [ENV_VARS.model]: 'codegeex4-all-9b' })).model, 'codegeex4-all-9b');
  assert.equal(sessionSettingsFromCli(parseCli(['load', '--model', 'glm-4-9b-chat'], env), { packageRoot: '/pkg' } as CliIo).modelName, 'glm-4-9b-chat');
  assert.throws(() => parseCli(['load', '--model', 'gpt-4'], env), (e: unknown) => e instanceof UsageError && /--model must be one of chatglm3-6b, glm-4-9b-chat, codegeex4-all-9b/.test(e.message));
});

test('help and version need no command; XDG_DATA_HOME moves the repository', () => {
  assert.equal(parseCli(['--help'], env).help, true);
  assert.equal(parseCli(['--version'], env).version, true);
  assert.equal(defaultRepositoryPath({ XDG_DATA_HOME: '/data' }), '/data/triton-chatglm/model_repository');
});

test('model settings: GPU ids as the container sees them (renumbered from 0)', () => {
  assert.deepEqual(modelSettingsFor(parseCli(['start', '--gpus', '2,3'], env)).gpuIds, [0, 1]);
  assert.deepEqual(modelSettingsFor(parseCli(['start', '--gpus', '5'], env)).gpuIds, [0]);
  assert.deepEqual(modelSettingsFor(parseCli(['start'], env)).gpuIds, [0]);
  assert.equal(modelSettingsFor(parseCli(['start', '--max-batch-size', '4'], env)).maxBatchSize, 4);
  // --gpus is the gpus setting (one instance per GPU), not the deprecated gpuIds.
  const two = settingsFromCli(parseCli(['start', '--gpus', '2,3'], env));
  assert.deepEqual([two.gpus, two.gpuIds, two.instanceCount], [['2', '3'], [], 1]);
});

test('history file: missing is empty, valid round-trips, invalid is refused and left untouched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hist-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'h.json');
  assert.deepEqual(await readHistory(file), []);
  const h = [{ role: 'system' as const, content: 'be brief' }, { role: 'user' as const, content: '你好' }, { role: 'assistant' as const, content: 'hi', metadata: '' }];
  await writeHistory(file, h);
  assert.deepEqual(await readHistory(file), h);
  for (const bad of ['{not json', '{"role":"user"}', '[{"role":"robot","content":"x"}]', '[{"role":"user","content":1}]', '[{"role":"user","content":"x","extra":1}]']) {
    writeFileSync(file, bad);
    await assert.rejects(readHistory(file), HistoryFileError);
    assert.equal(readFileSync(file, 'utf8'), bad, 'the bad file is not changed');
  }
});

test('errors → message, fix and exit code', () => {
  const usage = reportError(new UsageError('bad flag'), false);
  assert.equal(usage.exitCode, EXIT.usage);
  const server = reportError(new ServerError({ code: 'daemon-unreachable', message: 'Docker is down.', fix: 'Start Docker.', detail: 'raw docker text' }), false);
  assert.deepEqual(server, { exitCode: EXIT.failed, lines: ['error: Docker is down.', 'fix: Start Docker.'] });
  assert.ok(reportError(new ServerError({ code: 'unknown', message: 'm', fix: 'f', detail: 'raw docker text' }), true).lines.join('\n').includes('raw docker text'));
  const died = reportError(new ServerError({ code: 'container-exited', message: 'died', fix: 'f', logTail: ['boom'] }), false);
  assert.ok(died.lines.includes('  boom'));
  const notRunning = reportError(new TritonError('server-not-running', 'Cannot reach Triton', { operation: 'health' }), false);
  assert.equal(notRunning.exitCode, EXIT.notRunning);
  assert.match(notRunning.lines[1], /triton-chatglm start/);
  const notLoaded = reportError(new TritonError('model-not-loaded', 'not loaded', { operation: 'generate-stream' }), false);
  assert.match(notLoaded.lines[1], /triton-chatglm load/);
  assert.equal(reportError(new TritonError('cancelled', 'c', { operation: 'generate-stream' }), false).exitCode, EXIT.interrupted);
  const lost = reportError(new TritonError('connection-lost', 'lost', { operation: 'generate-stream', serverLive: true }), false);
  assert.equal(lost.exitCode, EXIT.failed, 'the server runs: not the "not running" exit code');
  assert.match(lost.lines[1]!, /still running: run the command again/);
});

test('serve-openai: --port, --host and --api-key are the endpoint\'s; Triton\'s port comes from TRITON_CHATGLM_PORT only', () => {
  const plain = parseCli(['serve-openai'], env);
  assert.equal(plain.command, 'serve-openai');
  assert.deepEqual([plain.openaiHost, plain.openaiPort, plain.openaiApiKey, plain.httpPort], [undefined, undefined, undefined, undefined]);
  const flags = parseCli(['serve-openai', '--host', '0.0.0.0', '--port', '9003', '--api-key', 'k1'], { ...env, TRITON_CHATGLM_PORT: '18000' });
  assert.deepEqual([flags.openaiHost, flags.openaiPort, flags.openaiApiKey, flags.httpPort], ['0.0.0.0', 9003, 'k1', 18000]);
  const fromEnv = parseCli(['serve-openai'], { ...env, TRITON_CHATGLM_OPENAI_PORT: '9100', TRITON_CHATGLM_OPENAI_API_KEY: 'k2', TRITON_CHATGLM_OPENAI_HOST: '::1' });
  assert.deepEqual([fromEnv.openaiHost, fromEnv.openaiPort, fromEnv.openaiApiKey], ['::1', 9100, 'k2']);
  assert.throws(() => parseCli(['serve-openai', '--port', '70000'], env), UsageError);
  // Other commands keep --port as Triton's HTTP port.
  assert.equal(parseCli(['status', '--port', '9000'], env).httpPort, 9000);
});
