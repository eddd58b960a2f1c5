import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstRunStep } from '../../../src/core/state/firstRun';
import { MODEL_STATES, SERVER_STATES, type LifecycleState } from '../../../src/core/state/lifecycle';

const state = (s: Partial<LifecycleState>): LifecycleState => ({ mode: 'managed', server: 'stopped', model: 'unloaded', ...s } as LifecycleState);

describe('the first run', () => {
  it('reveals the ChatGLM view when the first activation finds the setup needed', () => {
    assert.equal(firstRunStep(state({ server: 'setup' }), false), 'revealChat');
  });

  it('never again once a first run was recorded, in any state', () => {
    for (const server of SERVER_STATES) {
      for (const model of MODEL_STATES) assert.equal(firstRunStep(state({ server, model }), true), 'nothing', `${server} ${model}`);
    }
  });

  it('nothing when the first activation finds nothing to set up, or the server is external', () => {
    for (const server of SERVER_STATES.filter((s) => s !== 'setup')) assert.equal(firstRunStep(state({ server }), false), 'nothing', server);
    assert.equal(firstRunStep(state({ mode: 'external', server: 'setup' }), false), 'nothing');
  });
});
