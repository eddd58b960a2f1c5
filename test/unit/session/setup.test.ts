// The setup model: what the checklist shows in each lifecycle state, the fixes offered for each finding, the one
// action, and the context keys the walkthrough steps complete on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerError } from '../../../src/core/server';
import { fixesFor, isSetupProblem, setupActionOffered, setupContextValues, setupModel, withStartFailure, type SessionSettings } from '../../../src/core/session';
import { gpuPreflight } from '../../../src/core/session/setupChecks';
import type { LifecycleState } from '../../../src/core/state/lifecycle';
import { preflightReport, sessionSettings, setupError } from './fakes';

const managed = (server: LifecycleState['server'], model: LifecycleState['model'] = 'unloaded', extra: Partial<LifecycleState> = {}): LifecycleState => ({ mode: 'managed', server, model, ...extra });

const everythingMissing = preflightReport({
  docker: setupError('docker-missing'),
  daemon: { level: 'blocked', blockedBy: 'docker' }, 'nvidia-runtime': { level: 'blocked', blockedBy: 'docker' }, image: { level: 'blocked', blockedBy: 'docker' },
  weights: setupError('weights-missing'), 'gpu-memory': { level: 'unknown' },
});

test('everything missing: every check with its fixes, the count, and Re-check as the one action', () => {
  const m = setupModel({ state: managed('setup'), report: everythingMissing, checking: false, building: false });
  assert.equal(m.visible, true);
  assert.equal(m.phase, 'needed');
  assert.equal(m.primary, 'recheck');
  assert.equal(m.attention, 2, 'docker and the weights need the person');
  assert.equal(m.waiting, 3, 'the three checks docker blocks only wait');
  assert.deepEqual(m.items.map((i) => [i.id, i.level, i.fixes.join('+')]), [
    ['docker', 'error', 'installDocker+openSettings'],
    ['daemon', 'blocked', ''],
    ['nvidia-runtime', 'blocked', ''],
    ['image', 'blocked', ''],
    ['weights', 'error', 'downloadWeights+chooseWeights'],
    ['ports', 'ok', ''],
    ['gpu-memory', 'unknown', ''],
  ]);
});

test('the fix offered follows the finding', () => {
  const fix = (id: Parameters<typeof preflightReport>[0], building = false) => fixesFor(preflightReport(id).checks.find((c) => c.level !== 'ok')!, building);
  assert.deepEqual(fix({ daemon: setupError('daemon-unreachable') }), ['startDocker']);
  assert.deepEqual(fix({ daemon: setupError('permission-denied') }), ['dockerPermissions']);
  assert.deepEqual(fix({ 'nvidia-runtime': { level: 'warning', error: setupError('nvidia-runtime-missing') } }), ['installNvidiaToolkit']);
  assert.deepEqual(fix({ image: setupError('image-missing') }), ['buildImage', 'openSettings']);
  assert.deepEqual(fix({ image: setupError('image-missing') }, true), ['cancelBuild'], 'while the image builds');
  assert.deepEqual(fix({ weights: setupError('weights-missing') }), ['downloadWeights', 'chooseWeights']);
  assert.deepEqual(fixesFor(preflightReport({ weights: setupError('weights-missing') }).checks.find((c) => c.id === 'weights')!, false, true), ['cancelDownload'], 'while the weights download');
  assert.deepEqual(fix({ ports: setupError('port-allocated') }), ['openSettings']);
  assert.deepEqual(fix({ 'gpu-memory': { level: 'warning', error: setupError('gpu-memory-low') } }), ['openSettings']);
});

test('nothing missing: Start ChatGLM; before the first report: pending rows and no action', () => {
  const ready = setupModel({ state: managed('stopped'), report: preflightReport(), checking: false, building: false });
  assert.deepEqual([ready.phase, ready.primary, ready.attention], ['ready', 'startChatglm', 0]);
  const first = setupModel({ state: managed('stopped'), report: undefined, checking: true, building: false });
  assert.deepEqual([first.phase, first.primary], ['checking', undefined]);
  assert.ok(first.items.every((i) => i.level === 'pending'));
  const building = setupModel({ state: managed('setup'), report: preflightReport({ image: setupError('image-missing') }), checking: false, building: true });
  assert.equal(building.items.find((i) => i.id === 'image')?.level, 'pending');
  const downloading = setupModel({ state: managed('setup'), report: preflightReport({ weights: setupError('weights-missing') }), checking: false, building: false, downloading: true });
  const weights = downloading.items.find((i) => i.id === 'weights');
  assert.deepEqual([weights?.level, weights?.fixes], ['pending', ['cancelDownload']]);
  assert.ok(setupActionOffered(downloading, 'cancelDownload', 'weights'));
  assert.ok(!setupActionOffered(downloading, 'downloadWeights', 'weights'), 'no second download while one runs');
});

test('while it starts or loads: busy; running without the model: Start ChatGLM loads; ready or external: hidden', () => {
  const report = preflightReport();
  assert.equal(setupModel({ state: managed('starting'), report, checking: false, building: false }).phase, 'busy');
  assert.equal(setupModel({ state: managed('running', 'loading'), report, checking: false, building: false }).primary, undefined);
  const running = setupModel({ state: managed('running', 'failed', { modelError: { code: 'model-load-failed', message: 'CUDA out of memory' } }), report, checking: false, building: false });
  assert.deepEqual([running.phase, running.primary, running.items.length], ['running', 'startChatglm', 0]);
  assert.equal(running.failure?.message, 'CUDA out of memory');
  assert.equal(setupModel({ state: managed('running', 'ready'), report, checking: false, building: false }).visible, false);
  assert.equal(setupModel({ state: { mode: 'external', server: 'stopped', model: 'unloaded' }, report, checking: false, building: false }).visible, false);
  // A crash with every prerequisite still in place: Start ChatGLM again, with what happened.
  const crashed = setupModel({ state: managed('error', 'unloaded', { serverError: { code: 'container-exited', message: 'exit 137' } }), report, checking: false, building: false });
  assert.deepEqual([crashed.phase, crashed.primary, crashed.failure?.code], ['ready', 'startChatglm', 'container-exited']);
});

test('which failures are "setup needed", and a start failure marks its check', () => {
  assert.ok(isSetupProblem(setupError('docker-missing')));
  assert.ok(isSetupProblem(setupError('port-allocated')));
  assert.ok(!isSetupProblem(setupError('container-exited')));
  assert.ok(!isSetupProblem(new Error('docker-missing')));
  const marked = withStartFailure(preflightReport(), new ServerError({ code: 'image-missing', message: 'gone', fix: '' }));
  assert.equal(marked.ok, false);
  assert.equal(marked.checks.find((c) => c.id === 'image')?.level, 'error');
  assert.equal(marked.firstError?.message, 'gone');
});

test('a click is done only when the checklist offers it now', () => {
  const needed = setupModel({ state: managed('setup'), report: everythingMissing, checking: false, building: false });
  assert.ok(setupActionOffered(needed, 'recheck', undefined));
  assert.ok(!setupActionOffered(needed, 'startChatglm', undefined), 'not while something is missing');
  assert.ok(setupActionOffered(needed, 'installDocker', 'docker'));
  assert.ok(!setupActionOffered(needed, 'installDocker', 'weights'), 'a fix of another check');
  assert.ok(!setupActionOffered(needed, 'buildImage', 'image'), 'the image check is blocked: no fix');
  assert.ok(!setupActionOffered(needed, 'chooseWeights', undefined), 'a fix needs its check');
  const ready = setupModel({ state: managed('stopped'), report: preflightReport(), checking: false, building: false });
  assert.ok(setupActionOffered(ready, 'startChatglm', undefined));
  assert.ok(setupActionOffered(ready, 'recheck', undefined), 'Re-check stays offered while everything passes');
  const busy = setupModel({ state: managed('starting'), report: preflightReport(), checking: false, building: false });
  assert.ok(!setupActionOffered(busy, 'startChatglm', undefined) && !setupActionOffered(busy, 'recheck', undefined), 'nothing while it starts');
});

test('walkthrough context keys: from the report, or all proven by a running server', () => {
  const keys = setupContextValues(managed('setup'), preflightReport({ weights: setupError('weights-missing') }));
  assert.deepEqual(keys, {
    'tritonChatglm.setup.dockerReady': true, 'tritonChatglm.setup.gpuRuntimeReady': true,
    'tritonChatglm.setup.imageReady': true, 'tritonChatglm.setup.weightsReady': false,
  });
  assert.ok(Object.values(setupContextValues(managed('running', 'ready'), undefined)).every(Boolean));
  assert.ok(Object.values(setupContextValues(managed('stopped'), undefined)).every((v) => !v), 'nothing known yet');
});

test('the GPU check sizes the chosen model: GLM-4-9B needs more memory than ChatGLM3-6B, with its own shapes', () => {
  const chatglm3 = sessionSettings('managed');
  const glm4: SessionSettings = { ...chatglm3, server: { ...chatglm3.server, model: 'glm-4-9b-chat' }, modelName: 'glm-4-9b-chat' };
  const small = gpuPreflight(chatglm3);
  const big = gpuPreflight(glm4);
  assert.equal(small.gpuPlan?.config?.num_layers, 28);
  assert.equal(big.gpuPlan?.config?.num_layers, 40);
  assert.ok(big.requiredGpuMiB! > small.requiredGpuMiB!, `${big.requiredGpuMiB} MiB for GLM-4 vs ${small.requiredGpuMiB} MiB for ChatGLM3`);
});
