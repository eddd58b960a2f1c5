// The first run's adapter: the reveal happens on the first activation that finds the setup needed, and never on the
// next one (the flag in the global state), whatever that one finds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterFirstCheck } from '../../../src/vscode/server/firstRun';

test('the ChatGLM view is revealed after the first check that finds the setup needed, not on the second activation', async () => {
  const memento = new Map<string, unknown>();
  const globalState = { get: (k: string) => memento.get(k), update: async (k: string, v: unknown) => { memento.set(k, v); }, keys: () => [...memento.keys()] } as never;
  const store = { current: { mode: 'managed', server: 'setup', model: 'unloaded' } } as never;
  const log = { info: () => undefined } as never;
  let reveals = 0;
  await afterFirstCheck(globalState, store, () => { reveals += 1; }, log);
  assert.equal(reveals, 1);
  assert.equal(memento.get('tritonChatglm.firstRunDone'), true);
  await afterFirstCheck(globalState, store, () => { reveals += 1; }, log);
  assert.equal(reveals, 1, 'the second activation leaves the side bar as it is');
});

test('a first activation with nothing to set up records the first run without revealing anything', async () => {
  const memento = new Map<string, unknown>();
  const globalState = { get: (k: string) => memento.get(k), update: async (k: string, v: unknown) => { memento.set(k, v); }, keys: () => [...memento.keys()] } as never;
  let reveals = 0;
  await afterFirstCheck(globalState, { current: { mode: 'managed', server: 'stopped', model: 'unloaded' } } as never, () => { reveals += 1; }, { info: () => undefined } as never);
  assert.equal(memento.get('tritonChatglm.firstRunDone'), true);
  // Docker stopped on a later day: not a first run, the side bar stays.
  await afterFirstCheck(globalState, { current: { mode: 'managed', server: 'setup', model: 'unloaded' } } as never, () => { reveals += 1; }, { info: () => undefined } as never);
  assert.equal(reveals, 0);
});
