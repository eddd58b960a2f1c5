// The server/model policy of src/core/session, driven through fakes of the container layer, the Triton client and
// the timers: which calls it makes in which order, which states it reaches, what it reports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerError, type ServerHandle } from '../../../src/core/server';
import { TritonError } from '../../../src/core/triton';
import { deferred, harness, preflightReport, settle, setupError } from './fakes';

async function attachedReady(options: Parameters<typeof harness>[0] = {}) {
  const h = harness(options);
  await h.session.attach();
  assert.deepEqual([h.state.current.server, h.state.current.model], ['running', 'ready'], 'attach adopts what the server reports');
  h.client.calls.length = 0;
  h.steps.length = 0;
  return h;
}

test('load: changed files on a READY model are unloaded first (and waited for), then loaded', async () => {
  const h = await attachedReady();
  h.repository.changed = ['chatglm3-6b/config.pbtxt'];
  assert.equal(await h.session.load(), true);
  assert.deepEqual(h.client.calls, ['unload', 'wait:UNAVAILABLE', 'load']);
  assert.deepEqual(h.steps, ['writing-config', 'unloading-old', 'loading-weights']);
  assert.deepEqual(h.installs, [['/pkg/triton/model_repository', '/repo']], 'the repository is rendered again before the load');
  assert.equal(h.state.current.model, 'ready');
});

test('the chosen model names every load; a running container keeps the model it was started for until a restart', async () => {
  const chosen = harness({ model: 'glm-4-9b-chat' });
  chosen.container.status_ = { state: 'running', handle: { ...(chosen.container.status_ as { handle: ServerHandle }).handle, model: 'glm-4-9b-chat' } };
  await chosen.session.attach();
  assert.equal(chosen.session.modelName, 'glm-4-9b-chat');
  assert.equal(await chosen.session.load(), true);
  assert.deepEqual(chosen.client.loadedNames, ['glm-4-9b-chat']);

  // Started for ChatGLM3 (its label), GLM-4 chosen since: the server's model is the one addressed, and a load
  // (which cannot mount other weights) is refused with the advice to restart.
  const switched = harness({ model: 'glm-4-9b-chat' });
  switched.container.status_ = { state: 'running', handle: { ...(switched.container.status_ as { handle: ServerHandle }).handle, model: 'chatglm3-6b' } };
  await switched.session.attach();
  assert.equal(switched.session.modelName, 'chatglm3-6b');
  await assert.rejects(switched.session.load(), /started for chatglm3-6b and glm-4-9b-chat is chosen now: restart the server to switch models/);
  assert.deepEqual(switched.client.loadedNames, []);
});

test('load: unchanged files reload in place; a model that was not loaded is never unloaded first', async () => {
  const h = await attachedReady();
  assert.equal(await h.session.load(), true);
  assert.deepEqual(h.client.calls, ['load']);
  await h.session.unload();
  h.client.calls.length = 0;
  h.repository.changed = ['chatglm3-6b/config.pbtxt'];
  assert.equal(await h.session.load(), true);
  assert.deepEqual(h.client.calls, ['load'], 'nothing to unload: the model was not READY');
});

test('a fresh load (Reload Model after "the model failed") unloads a READY model first even when nothing changed', async () => {
  const h = await attachedReady();
  assert.equal(await h.session.load({ fresh: true }), true);
  assert.deepEqual(h.client.calls, ['unload', 'wait:UNAVAILABLE', 'load']);
  assert.deepEqual(h.steps, ['writing-config', 'unloading-old', 'loading-weights']);
  const external = await attachedReady({ mode: 'external' });
  assert.equal(await external.session.load({ fresh: true }), true);
  assert.deepEqual(external.client.calls, ['unload', 'wait:UNAVAILABLE', 'load'], 'an external server\'s failed model too');
});

test('an answer refused with "the model failed": the model shows failed, and the next load unloads it first', async () => {
  const h = await attachedReady();
  h.session.reportModelFailure({ code: 'model-failed', message: 'the model failed: CUDA error; reload it' });
  assert.deepEqual([h.state.current.model, h.state.current.modelError?.code], ['failed', 'model-failed']);
  assert.equal(await h.session.load(), true);
  assert.deepEqual(h.client.calls, ['unload', 'wait:UNAVAILABLE', 'load'], 'a plain load of the READY model would keep the failed process');
  assert.equal(h.state.current.model, 'ready');
});

test('load of an external server renders nothing: the repository is not ours', async () => {
  const h = await attachedReady({ mode: 'external' });
  h.repository.changed = ['chatglm3-6b/config.pbtxt'];
  assert.equal(await h.session.load(), true);
  assert.deepEqual(h.installs, []);
  assert.deepEqual(h.client.calls, ['load']);
});

test('unload while loading cancels the load, which unloads what the server was loading', async () => {
  const h = await attachedReady();
  await h.session.unload();
  h.client.holdLoad = true;
  h.client.calls.length = 0;
  const loading = h.session.load();
  await settle();
  assert.equal(h.state.current.model, 'loading');
  await h.session.unload();
  assert.equal(await loading, false, 'a cancelled load resolves false');
  assert.deepEqual(h.client.calls, ['load', 'unload']);
  assert.equal(h.state.current.model, 'unloaded');
  assert.deepEqual(h.shown, [], 'a cancel is not an error');
});

test('a failed load keeps its reason in the state and is thrown to the caller', async () => {
  const h = await attachedReady();
  h.client.loadModel = async () => { throw new ServerError({ code: 'unknown', message: 'boom', fix: '' }); };
  await assert.rejects(h.session.load(), /boom/);
  assert.equal(h.state.current.model, 'failed');
  assert.deepEqual(h.state.current.modelError, { code: 'unknown', message: 'boom' });
});

test('exit watch: when `docker wait` returns and the container exited, the state and the person are told why', async () => {
  const h = await attachedReady();
  assert.equal(h.container.exits.length, 1, 'attach watches the container');
  assert.equal(h.container.follows, 1, 'and follows its log');
  h.container.status_ = { state: 'exited', containerId: 'c0ffee', exitCode: 137, logTail: ['CUDA out of memory'] };
  h.container.exits[0]!.resolve(137);
  await settle();
  assert.equal(h.state.current.server, 'error');
  assert.equal(h.state.current.serverError?.code, 'container-exited');
  assert.match(h.state.current.serverError?.message ?? '', /exit code 137/);
  assert.equal(h.shown.length, 1);
  assert.equal(h.shown[0]!.context, 'server');
  assert.ok(h.logged.includes('[container] CUDA out of memory'), 'the last log lines are kept');
  assert.equal(h.session.client, undefined, 'the connection to the dead server is dropped');
  assert.equal(h.client.destroyed, true);
});

// Issue #27: an answer whose stream broke because the container was killed is reported as that exit (code 137,
// last lines), not as "Cannot reach Triton ... Is the server running?".
test('explainFailure: a request that found no server is the container\'s exit when it exited; else its own error', async () => {
  const h = await attachedReady();
  const unreachable = new TritonError('server-not-running', 'Cannot reach Triton Inference Server (ECONNRESET). Is the server running?', { operation: 'generate-stream' });
  assert.equal(await h.session.explainFailure(unreachable), unreachable, 'a running container: nothing more to say');
  h.container.status_ = { state: 'exited', containerId: 'c0ffee', exitCode: 137, logTail: ['Killed'] };
  const exit = await h.session.explainFailure(unreachable);
  assert.ok(exit instanceof ServerError);
  assert.equal(exit.code, 'container-exited');
  assert.equal(exit.exitCode, 137);
  assert.deepEqual(exit.logTail, ['Killed']);
  h.container.status_ = { state: 'absent' };
  assert.equal(((await h.session.explainFailure(unreachable)) as ServerError).code, 'container-exited', 'removed counts as gone too');
});

test('exit watch: `docker wait` ending while the container runs is started again after a pause', async () => {
  const h = await attachedReady();
  h.container.exits[0]!.resolve(undefined);
  await settle();
  assert.equal(h.state.current.server, 'running', 'still running: nothing to report');
  assert.equal(h.container.exits.length, 1, 'not again at once');
  assert.equal(h.timers.active(5_000), 1);
  h.timers.fire(5_000);
  assert.equal(h.container.exits.length, 2, 'watching again');
  assert.deepEqual(h.shown, []);
});

test('a stop is not reported as a crash, and removes the container', async () => {
  const h = await attachedReady();
  await h.session.stop();
  await settle();
  assert.ok(h.container.calls.includes('stop'));
  assert.deepEqual([h.state.current.server, h.state.current.model], ['stopped', 'unloaded']);
  assert.deepEqual(h.shown, []);
  assert.ok(h.container.exits.every((e) => e.disposed), 'the exit watch was stopped first');
});

test('health polling: every 2 s only while a request runs; a server that stops answering is checked and reported', async () => {
  const h = await attachedReady();
  assert.equal(h.timers.active(2_000), 0, 'no polling while idle');
  const request = deferred<string>();
  const tracked = h.session.track(request.promise);
  assert.equal(h.timers.active(2_000), 1);
  h.timers.fire(2_000);
  await settle();
  assert.deepEqual(h.client.calls, ['isLive'], 'a live server costs one health call');
  h.client.live = false;
  h.container.status_ = { state: 'exited', containerId: 'c0ffee', exitCode: 1, logTail: [] };
  h.timers.fire(2_000);
  await settle();
  assert.equal(h.state.current.server, 'error');
  assert.equal(h.shown[0]?.context, 'server');
  request.resolve('answer');
  assert.equal(await tracked, 'answer');
  assert.equal(h.timers.active(2_000), 0, 'polling ends with the last request');
});

test('external server: probed every 10 s; unreachable shows as stopped, reachable again as running', async () => {
  const h = await attachedReady({ mode: 'external' });
  assert.equal(h.timers.active(10_000), 1);
  h.client.live = false;
  h.timers.fire(10_000);
  await settle();
  assert.equal(h.state.current.server, 'stopped');
  h.client.live = true;
  h.timers.fire(10_000);
  await settle();
  assert.deepEqual([h.state.current.server, h.state.current.model], ['running', 'ready']);
});

test('a restricted repository API (external server without the key) falls back to readiness', async () => {
  const h = harness({ mode: 'external' });
  h.client.restrictedIndex = true;
  await h.session.attach();
  assert.equal(h.state.current.model, 'ready');
  assert.deepEqual(await h.session.report(), { live: true, model: { via: 'readiness', ready: true } });
});

test('without watching (the CLI) nothing follows, watches or polls', async () => {
  const h = await attachedReady({ watch: false });
  assert.equal(h.container.exits.length, 0);
  assert.equal(h.container.follows, 0);
  await h.session.track(Promise.resolve());
  const external = await attachedReady({ mode: 'external', watch: false });
  assert.equal(h.timers.active(2_000) + external.timers.active(10_000), 0);
});

test('start: renders the repository, runs the container, adopts it and offers to load', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  const handle = await h.session.start();
  assert.equal(handle?.containerName, 'triton-chatglm3');
  assert.deepEqual(h.steps, ['preparing-repository', 'running']);
  assert.equal(h.installs.length, 1);
  assert.deepEqual([h.state.current.server, h.state.current.model], ['running', 'unloaded']);
  assert.ok(h.session.client, 'connected');
  assert.equal(h.container.exits.length, 1, 'watching for its exit');
  assert.equal(h.container.follows, 0, 'the start itself streams the log');
  await settle();
  assert.equal(h.offers(), 1);
});

test('a failed start keeps its error in the state and throws it', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  h.container.startError = new ServerError({ code: 'liveness-timeout', message: 'Triton did not become live in 180 s.', fix: '' });
  await assert.rejects(h.session.start(), /did not become live/);
  assert.equal(h.state.current.server, 'error');
  assert.equal(h.state.current.serverError?.code, 'liveness-timeout');
  assert.equal(h.session.client, undefined);
});

test('without weights the start runs every check and ends in "setup needed" (not "stopped", not "server error")', async () => {
  const h = harness({ weightsPath: '' });
  h.container.status_ = { state: 'absent' };
  h.container.report = preflightReport({ weights: setupError('weights-missing', 'No weights folder is set.'), image: setupError('image-missing') });
  // The first in checklist order is what the start throws (and the state keeps); the report has every one.
  await assert.rejects(h.session.start(), (e: unknown) => e instanceof ServerError && e.code === 'image-missing');
  assert.deepEqual([h.state.current.server, h.state.current.serverError?.code], ['setup', 'image-missing']);
  // The checklist gets the whole report of that start, not only its first error.
  const report = h.session.setup.report;
  assert.deepEqual(report?.checks.filter((c) => c.level === 'error').map((c) => c.id), ['image', 'weights']);
  assert.equal(h.session.client, undefined);
  assert.ok(h.setupChanges() > 0);
});

test('a prerequisite only `docker run` can prove missing (no GPU runtime, a port taken meanwhile) is "setup needed" too', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  h.container.report = preflightReport({ 'nvidia-runtime': { level: 'warning', error: setupError('nvidia-runtime-missing') } });
  h.container.startError = new ServerError({ code: 'nvidia-runtime-missing', message: 'Docker cannot give the container a GPU.', fix: '' });
  await assert.rejects(h.session.start(), /cannot give the container a GPU/);
  assert.equal(h.state.current.server, 'setup');
  const runtime = h.session.setup.report?.checks.find((c) => c.id === 'nvidia-runtime');
  assert.equal(runtime?.level, 'error', 'the warning became a failure: docker run proved it');
  assert.equal(h.session.setup.report?.ok, false);

  h.container.startError = new ServerError({ code: 'port-allocated', message: 'Port 8000 is already in use on this machine.', fix: '' });
  h.container.report = preflightReport();
  await assert.rejects(h.session.start(), /Port 8000/);
  assert.deepEqual([h.state.current.server, h.state.current.serverError?.code], ['setup', 'port-allocated']);
  assert.equal(h.session.setup.report?.checks.find((c) => c.id === 'ports')?.level, 'error');
});

test('a stop during a start cancels it; the stop removes the container', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  const gate = deferred();
  const start = h.container.start.bind(h.container);
  h.container.start = async (options) => {
    await Promise.race([gate.promise, new Promise((resolve) => options.signal?.addEventListener('abort', resolve))]);
    if (options.signal?.aborted) throw new ServerError({ code: 'cancelled', message: 'Cancelled.', fix: '' });
    return start(options);
  };
  const starting = h.session.start();
  await settle();
  assert.equal(h.state.current.server, 'starting');
  await h.session.stop();
  assert.equal(await starting, undefined);
  assert.deepEqual(h.state.current.server, 'stopped');
  assert.ok(h.container.calls.includes('stop'));
  assert.deepEqual(h.shown, []);
});

// ---- setup checks, Start ChatGLM, the load offer, activation ------------------------------------------------------

test('checkSetup: every check at once; something missing is "setup needed", all fixed is "stopped"', async () => {
  const h = harness();
  h.container.report = preflightReport({
    docker: setupError('docker-missing'),
    daemon: { level: 'blocked', blockedBy: 'docker' }, 'nvidia-runtime': { level: 'blocked', blockedBy: 'docker' }, image: { level: 'blocked', blockedBy: 'docker' },
    weights: setupError('weights-missing'), 'gpu-memory': { level: 'unknown' },
  });
  const report = await h.session.checkSetup();
  assert.equal(report?.checks.length, 7);
  assert.deepEqual([h.state.current.server, h.state.current.serverError?.code], ['setup', 'docker-missing']);
  assert.equal(h.session.setup.checking, false);
  assert.equal(h.session.setup.report, report);
  h.container.report = preflightReport({ 'gpu-memory': { level: 'unknown' } });
  await h.session.checkSetup();
  assert.deepEqual([h.state.current.server, h.state.current.serverError], ['stopped', undefined]);
  assert.deepEqual(h.container.calls.filter((c) => c === 'preflight').length, 2);
});

test('checkSetup: "checking" while it runs; never while a server runs (it holds the ports); never in external mode', async () => {
  const h = harness();
  const gate = deferred();
  h.container.preflightGate = gate.promise;
  const checking = h.session.checkSetup();
  await settle();
  assert.equal(h.session.setup.checking, true);
  gate.resolve();
  await checking;
  assert.equal(h.session.setup.checking, false);

  const running = await attachedReady();
  await running.session.checkSetup();
  assert.ok(!running.container.calls.includes('preflight'));
  const external = harness({ mode: 'external' });
  assert.equal(await external.session.checkSetup(), undefined);
  assert.ok(!external.container.calls.includes('preflight'));
});

test('a background check that ends after a start began does not move the start\'s state', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  const gate = deferred();
  h.container.preflightGate = gate.promise;
  h.container.report = preflightReport({ image: setupError('image-missing') });
  const check = h.session.checkSetup();
  await settle();
  h.container.preflightGate = undefined;
  h.container.report = preflightReport();
  await h.session.start();
  assert.equal(h.state.current.server, 'running');
  gate.resolve(); // the old check ends now, with its stale "image missing"
  await check;
  assert.equal(h.state.current.server, 'running');
  assert.equal(h.session.setup.report?.ok, true, 'the start\'s own report is the one shown');
});

test('Start ChatGLM: starts without asking to load, then loads; on a running server it only loads', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  h.client.state = 'UNAVAILABLE';
  assert.equal(await h.session.startChatglm(), true);
  assert.deepEqual([h.state.current.server, h.state.current.model], ['running', 'ready']);
  assert.deepEqual(h.container.calls.filter((c) => c === 'start'), ['start']);
  assert.ok(h.client.calls.includes('load'));
  await settle();
  assert.equal(h.offers(), 0, 'no "Load the model now?" in the one action');
  assert.equal(await h.session.startChatglm(), true, 'ready already: nothing to do');
  assert.equal(h.container.calls.filter((c) => c === 'start').length, 1);

  const running = harness();
  await running.session.attach();
  running.state.dispatch({ type: 'unloadRequested' });
  running.state.dispatch({ type: 'modelUnloaded' });
  assert.equal(await running.session.startChatglm(), true);
  assert.ok(!running.container.calls.includes('start'));
  assert.equal(running.state.current.model, 'ready');
});

test('Start ChatGLM with something missing: "setup needed", nothing loaded', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  h.container.report = preflightReport({ image: setupError('image-missing') });
  await assert.rejects(h.session.startChatglm(), (e: unknown) => e instanceof ServerError && e.code === 'image-missing');
  assert.equal(h.state.current.server, 'setup');
  assert.ok(!h.client.calls.includes('load'));
});

test('"Load the model now?" goes stale (and closes) when the model loads or the server stops; accepting it loads', async () => {
  const h = harness();
  h.container.status_ = { state: 'absent' };
  await h.session.start();
  await settle();
  assert.equal(h.offers(), 1);
  const first = h.offerSignals[0]!;
  assert.equal(first.aborted, false, 'still relevant: the server runs, the model is not loaded');
  await h.session.load(); // e.g. from the view's button or the palette
  assert.equal(first.aborted, true);

  await h.session.stop();
  h.container.status_ = { state: 'absent' };
  await h.session.start();
  await settle();
  const second = h.offerSignals[1]!;
  await h.session.stop();
  assert.equal(second.aborted, true, 'the server stopped');

  h.container.status_ = { state: 'absent' };
  h.client.state = 'UNAVAILABLE';
  h.answerOffer(async () => true);
  h.client.calls.length = 0;
  await h.session.start();
  await settle();
  assert.ok(h.client.calls.includes('load'), 'accepted: the session loads');
  assert.equal(h.state.current.model, 'ready');
});

test('activation: attach, check the setup, and auto-start only when asked and nothing is missing', async () => {
  const off = harness();
  off.container.status_ = { state: 'absent' };
  await off.session.activate();
  assert.equal(off.state.current.server, 'stopped');
  assert.ok(off.container.calls.includes('preflight'));
  assert.ok(!off.container.calls.includes('start'));

  const on = harness({ autoStart: true });
  on.container.status_ = { state: 'absent' };
  on.client.state = 'UNAVAILABLE';
  await on.session.activate();
  assert.deepEqual([on.state.current.server, on.state.current.model], ['running', 'ready']);

  const missing = harness({ autoStart: true });
  missing.container.status_ = { state: 'absent' };
  missing.container.report = preflightReport({ weights: setupError('weights-missing') });
  await missing.session.activate();
  assert.equal(missing.state.current.server, 'setup');
  assert.ok(!missing.container.calls.includes('start'));

  // Our container already runs (a window reload): adopted, no checks needed.
  const reload = harness({ autoStart: true });
  await reload.session.activate();
  assert.deepEqual([reload.state.current.server, reload.state.current.model], ['running', 'ready']);
  assert.ok(!reload.container.calls.includes('preflight'));
});

test('with recheckSetup (the extension) the checks run again after a stop and after a crash', async () => {
  const h = harness({ recheckSetup: true });
  await h.session.attach();
  await h.session.stop();
  await settle();
  assert.equal(h.container.calls.filter((c) => c === 'preflight').length, 1, 'after the stop');
  const crashed = harness({ recheckSetup: true });
  await crashed.session.attach();
  crashed.container.status_ = { state: 'exited', containerId: 'x', exitCode: 137, logTail: ['Killed'] };
  crashed.container.report = preflightReport({ daemon: setupError('daemon-unreachable') });
  crashed.container.exits[0]!.resolve(137);
  await settle();
  assert.ok(crashed.container.calls.includes('preflight'));
  assert.deepEqual([crashed.state.current.server, crashed.state.current.serverError?.code], ['setup', 'daemon-unreachable']);
});
