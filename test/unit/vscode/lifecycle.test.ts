import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  canInfer, initialState, LifecycleMachine, MODEL_STATES, SERVER_STATES, transition,
  type LifecycleEvent, type LifecycleState,
} from '../../../src/core/state/lifecycle';

const err = { code: 'container-exited', message: 'The Triton container stopped unexpectedly.' };
const setupErr = { code: 'docker-missing', message: 'The Docker command "docker" was not found.' };

function run(state: LifecycleState, ...events: LifecycleEvent[]): LifecycleState {
  for (const e of events) {
    const r = transition(state, e);
    assert.ok(r.accepted, `${e.type} should be accepted in ${state.server}/${state.model}`);
    state = r.state;
  }
  return state;
}

test('managed happy path: start, load, unload, stop', () => {
  let s = initialState('managed');
  s = run(s, { type: 'startRequested' });
  assert.deepEqual([s.server, s.model], ['starting', 'unloaded']);
  s = run(s, { type: 'serverUp' }, { type: 'loadRequested' });
  assert.deepEqual([s.server, s.model], ['running', 'loading']);
  assert.equal(canInfer(s), false);
  s = run(s, { type: 'modelReady' });
  assert.equal(canInfer(s), true);
  s = run(s, { type: 'unloadRequested' }, { type: 'modelUnloaded' }, { type: 'stopRequested' }, { type: 'serverStopped' });
  assert.deepEqual([s.server, s.model], ['stopped', 'unloaded']);
});

test('load is rejected while the server is not running', () => {
  for (const server of ['stopped', 'starting', 'stopping', 'error'] as const) {
    const s: LifecycleState = { mode: 'managed', server, model: 'unloaded' };
    const r = transition(s, { type: 'loadRequested' });
    assert.equal(r.accepted, false, server);
    assert.equal(r.state, s);
  }
});

test('external mode never starts or stops a server', () => {
  const s = initialState('external');
  assert.equal(transition(s, { type: 'startRequested' }).accepted, false);
  const running = run(s, { type: 'observed', live: true, model: 'ready' });
  assert.equal(transition(running, { type: 'stopRequested' }).accepted, false);
  // Unreachable: shown as stopped, not as an error we caused.
  const gone = run(running, { type: 'observed', live: false, model: 'unloaded' });
  assert.deepEqual([gone.server, gone.model], ['stopped', 'unloaded']);
});

test('a crash keeps its evidence and drops the model; a restart clears it', () => {
  let s = run(initialState('managed'), { type: 'startRequested' }, { type: 'serverUp' }, { type: 'loadRequested' }, { type: 'modelReady' });
  s = run(s, { type: 'serverLost', error: err });
  assert.deepEqual([s.server, s.model], ['error', 'unloaded']);
  assert.deepEqual(s.serverError, err);
  s = run(s, { type: 'startRequested' });
  assert.equal(s.serverError, undefined);
});

test('a failed load keeps the reason until the next load', () => {
  const reason = { code: 'model-load-failed', message: "Loading 'chatglm3-6b' failed: CUDA out of memory" };
  let s = run(initialState('managed'), { type: 'startRequested' }, { type: 'serverUp' }, { type: 'loadRequested' }, { type: 'loadFailed', error: reason });
  assert.equal(s.model, 'failed');
  assert.deepEqual(s.modelError, reason);
  s = run(s, { type: 'loadRequested' });
  assert.equal(s.model, 'loading');
  assert.equal(s.modelError, undefined);
});

test('a model a device fault stopped stays failed against READY probes until it is loaded again', () => {
  const fault = { code: 'model-failed', message: "Model 'chatglm3-6b' failed and stopped accepting requests; reload it." };
  let s = run(initialState('managed'), { type: 'observed', live: true, model: 'ready' }, { type: 'observed', live: true, model: 'failed', modelError: fault });
  assert.deepEqual([s.model, s.modelError], ['failed', fault]);
  assert.equal(transition(s, { type: 'observed', live: true, model: 'ready' }).accepted, false, 'Triton 2.51 still says READY');
  s = run(s, { type: 'loadRequested' }, { type: 'modelReady' });
  assert.deepEqual([s.model, s.modelError], ['ready', undefined]);
  const loadFailure = run(initialState('managed'), { type: 'observed', live: true, model: 'failed', modelError: { code: 'model-load-failed', message: 'x' } });
  assert.equal(run(loadFailure, { type: 'observed', live: true, model: 'ready' }).model, 'ready', 'other failures follow the server');
});

test('attach after a reload adopts what the server reports', () => {
  const s = run(initialState('managed'), { type: 'observed', live: true, model: 'ready' });
  assert.deepEqual([s.server, s.model], ['running', 'ready']);
  const loading = run(initialState('managed'), { type: 'observed', live: true, model: 'loading' });
  assert.equal(loading.model, 'loading');
});

test('a stale probe cannot undo our own load or unload in flight', () => {
  const loading: LifecycleState = { mode: 'managed', server: 'running', model: 'loading' };
  assert.equal(transition(loading, { type: 'observed', live: true, model: 'unloaded' }).accepted, false);
  assert.equal(transition(loading, { type: 'observed', live: true, model: 'ready' }).state.model, 'ready');
  const unloading: LifecycleState = { mode: 'managed', server: 'running', model: 'unloading' };
  assert.equal(transition(unloading, { type: 'observed', live: true, model: 'ready' }).accepted, false);
  const starting: LifecycleState = { mode: 'managed', server: 'starting', model: 'unloaded' };
  assert.equal(transition(starting, { type: 'observed', live: false, model: 'unloaded' }).accepted, false);
});

test('stopping a server with a loaded model shows the model unloading', () => {
  const s = run({ mode: 'managed', server: 'running', model: 'ready' }, { type: 'stopRequested' });
  assert.deepEqual([s.server, s.model], ['stopping', 'unloading']);
});

test('no event ever produces a model state other than unloaded on a server that is not running', () => {
  const events: LifecycleEvent[] = [
    { type: 'startRequested' }, { type: 'serverUp' }, { type: 'startFailed', error: err }, { type: 'stopRequested' },
    { type: 'serverStopped' }, { type: 'serverLost', error: err }, { type: 'loadRequested' }, { type: 'modelReady' },
    { type: 'loadFailed', error: err }, { type: 'unloadRequested' }, { type: 'modelUnloaded' },
    { type: 'observed', live: true, model: 'ready' }, { type: 'observed', live: false, model: 'unloaded' },
    { type: 'modeChanged', mode: 'external' }, { type: 'setupNeeded', error: setupErr }, { type: 'setupComplete' },
  ];
  let checked = 0;
  for (const mode of ['managed', 'external'] as const) {
    for (const server of SERVER_STATES) {
      for (const model of MODEL_STATES) {
        for (const e of events) {
          const { state, accepted } = transition({ mode, server, model }, e);
          if (!accepted) continue;
          checked++;
          if (state.server === 'stopped' || state.server === 'setup' || state.server === 'error' || state.server === 'starting') {
            assert.equal(state.model, 'unloaded', `${mode} ${server}/${model} + ${e.type}`);
          }
          if (state.server === 'stopping') assert.ok(state.model === 'unloading' || state.model === 'unloaded');
        }
      }
    }
  }
  assert.ok(checked > 50);
});

test('a missing prerequisite is "setup needed", never a server error: from a check or from a start', () => {
  // The checks at activation find Docker missing.
  let s = run(initialState('managed'), { type: 'setupNeeded', error: setupErr });
  assert.deepEqual([s.server, s.model], ['setup', 'unloaded']);
  assert.deepEqual(s.serverError, setupErr);
  assert.equal(canInfer(s), false);
  // Start ChatGLM / Start Server remain possible (they check again); a start that finds it still missing goes back.
  s = run(s, { type: 'startRequested' });
  assert.equal(s.server, 'starting');
  s = run(s, { type: 'setupNeeded', error: { code: 'weights-missing', message: 'No weights folder is set.' } });
  assert.deepEqual([s.server, s.serverError?.code], ['setup', 'weights-missing']);
  // The same finding again changes nothing; a different one replaces it.
  assert.equal(transition(s, { type: 'setupNeeded', error: { code: 'weights-missing', message: 'No weights folder is set.' } }).accepted, false);
  // Everything fixed: stopped, ready to start, with no error left.
  s = run(s, { type: 'setupComplete' });
  assert.deepEqual([s.server, s.serverError], ['stopped', undefined]);
  assert.equal(transition(s, { type: 'setupComplete' }).accepted, false, 'complete only ends "setup needed"');
});

test('"setup needed" is only for a managed server that is not running; nothing there can be stopped or lost', () => {
  const running: LifecycleState = { mode: 'managed', server: 'running', model: 'ready' };
  assert.equal(transition(running, { type: 'setupNeeded', error: setupErr }).accepted, false, 'a running server proves its setup');
  assert.equal(transition(initialState('external'), { type: 'setupNeeded', error: setupErr }).accepted, false);
  const crashed = run(running, { type: 'serverLost', error: err });
  assert.equal(run(crashed, { type: 'setupNeeded', error: setupErr }).server, 'setup', 'a crash whose cause is a missing prerequisite');
  const setup = run(initialState('managed'), { type: 'setupNeeded', error: setupErr });
  assert.equal(transition(setup, { type: 'stopRequested' }).accepted, false);
  assert.equal(transition(setup, { type: 'serverLost', error: err }).accepted, false);
  assert.equal(transition(setup, { type: 'observed', live: false, model: 'unloaded' }).accepted, false);
  // Our container found running after all (another window started it): the truth wins.
  assert.deepEqual(run(setup, { type: 'observed', live: true, model: 'ready' }).server, 'running');
});

test('the machine tells its listeners about every accepted event, and only those', () => {
  const machine = new LifecycleMachine('managed');
  const seen: string[] = [];
  const sub = machine.onDidChange((s) => seen.push(s.server));
  machine.dispatch({ type: 'setupNeeded', error: setupErr });
  machine.dispatch({ type: 'serverUp' }); // refused
  machine.dispatch({ type: 'setupComplete' });
  sub.dispose();
  machine.dispatch({ type: 'startRequested' });
  assert.deepEqual(seen, ['setup', 'stopped']);
});
