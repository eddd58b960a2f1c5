// The server/model policy of src/core/session, driven through fakes of the container layer, the Triton client and
// the timers: which calls it makes in which order, which states it reaches, what it reports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerError } from '../../../src/core/server';
import { deferred, harness, settle } from './fakes';

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

test('a failed start keeps its error in the state and throws it; without weights nothing starts at all', async () => {
  const h = harness();
  h.container.startError = new ServerError({ code: 'port-allocated', message: 'Port 8000 is already in use on this machine.', fix: '' });
  await assert.rejects(h.session.start(), /Port 8000/);
  assert.equal(h.state.current.server, 'error');
  assert.equal(h.state.current.serverError?.code, 'port-allocated');
  assert.equal(h.session.client, undefined);

  const none = harness({ weightsPath: '' });
  await assert.rejects(none.session.start(), (e: unknown) => e instanceof ServerError && e.code === 'weights-missing');
  assert.equal(none.state.current.server, 'stopped', 'refused before any state change');
  assert.deepEqual(none.container.calls, []);
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
