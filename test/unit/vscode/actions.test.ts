import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  availableActions, contextKeyValues, ENABLEMENT, isActionAvailable, LIFECYCLE_ACTIONS, type LifecycleAction,
} from '../../../src/core/state/actions';
import { MODEL_STATES, SERVER_STATES, type LifecycleState } from '../../../src/core/state/lifecycle';

const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: { commands: { command: string; enablement?: string }[] };
};

/** The subset of VS Code's when-clause language the manifest uses: && || ! == != =~ /re/. */
function evaluate(clause: string, ctx: Record<string, string | boolean>): boolean {
  return clause.split('||').some((conj) => conj.split('&&').every((raw) => {
    const term = raw.trim();
    let m = /^(\S+)\s*=~\s*\/(.*)\/$/.exec(term);
    if (m) return new RegExp(m[2]!).test(String(ctx[m[1]!] ?? ''));
    m = /^(\S+)\s*(==|!=)\s*(\S+)$/.exec(term);
    if (m) return (String(ctx[m[1]!]) === m[3]) === (m[2] === '==');
    if (term.startsWith('!')) return !ctx[term.slice(1)];
    if (/^[\w.]+$/.test(term)) return Boolean(ctx[term]);
    throw new Error(`unsupported when-clause term: ${term}`);
  }));
}

const COMMAND_OF: Partial<Record<LifecycleAction, string>> = {
  startChatglm: 'tritonChatglm.startChatglm',
  recheckSetup: 'tritonChatglm.recheckSetup',
  start: 'tritonChatglm.startServer',
  stop: 'tritonChatglm.stopServer',
  restart: 'tritonChatglm.restartServer',
  load: 'tritonChatglm.loadModel',
  unload: 'tritonChatglm.unloadModel',
  buildImage: 'tritonChatglm.buildServingImage',
  showStatus: 'tritonChatglm.showServerStatus',
};

function* allStates(): Generator<[LifecycleState, boolean]> {
  for (const mode of ['managed', 'external'] as const)
    for (const server of SERVER_STATES)
      for (const model of MODEL_STATES)
        for (const building of [false, true]) yield [{ mode, server, model }, building];
}

test('package.json enablement clauses are exactly the action table, for every state', () => {
  let checks = 0;
  for (const [action, command] of Object.entries(COMMAND_OF) as [LifecycleAction, string][]) {
    const contributed = pkg.contributes.commands.find((c) => c.command === command);
    assert.ok(contributed, `${command} is contributed`);
    assert.equal(contributed.enablement, ENABLEMENT[action], `${command} enablement matches ENABLEMENT`);
    for (const [state, building] of allStates()) {
      const ctx = contextKeyValues(state, { building });
      assert.equal(evaluate(contributed.enablement!, ctx), isActionAvailable(action, state, { building }),
        `${command} in ${state.mode} ${state.server}/${state.model} building=${building}`);
      checks++;
    }
  }
  assert.equal(checks, 9 * 2 * SERVER_STATES.length * MODEL_STATES.length * 2);
});

test('no Load or Unload while the server is down; no Start/Stop in external mode', () => {
  for (const [state, building] of allStates()) {
    const actions = availableActions(state, { building });
    if (state.server !== 'running') {
      assert.ok(!actions.includes('load') && !actions.includes('unload') && !actions.includes('explain'));
    }
    if (state.mode === 'external') {
      assert.ok(!actions.some((a) => a === 'start' || a === 'stop' || a === 'restart' || a === 'buildImage' || a === 'recheckSetup'));
    }
  }
});

test('each state offers something sensible', () => {
  const ctx = { building: false };
  assert.deepEqual(availableActions({ mode: 'managed', server: 'stopped', model: 'unloaded' }, ctx), ['startChatglm', 'recheckSetup', 'start', 'buildImage']);
  // Setup needed: Start ChatGLM and Start Server stay (they run every check again and say what is still missing).
  assert.deepEqual(availableActions({ mode: 'managed', server: 'setup', model: 'unloaded' }, ctx), ['startChatglm', 'recheckSetup', 'start', 'buildImage']);
  // A running server without the model: Start ChatGLM is the load.
  assert.deepEqual(availableActions({ mode: 'managed', server: 'running', model: 'unloaded' }, ctx), ['startChatglm', 'stop', 'restart', 'load', 'buildImage', 'showStatus']);
  assert.deepEqual(availableActions({ mode: 'external', server: 'running', model: 'failed' }, ctx), ['startChatglm', 'load', 'unload', 'showStatus']);
  assert.deepEqual(availableActions({ mode: 'managed', server: 'running', model: 'loading' }, ctx), ['stop', 'restart', 'unload', 'buildImage', 'showStatus']);
  assert.deepEqual(availableActions({ mode: 'managed', server: 'running', model: 'ready' }, ctx), ['stop', 'restart', 'load', 'unload', 'buildImage', 'showStatus', 'explain']);
  assert.deepEqual(availableActions({ mode: 'external', server: 'running', model: 'unloaded' }, { building: true }), ['startChatglm', 'load', 'showStatus']);
});

test('context keys carry the state names used by the manifest', () => {
  const values = contextKeyValues({ mode: 'managed', server: 'running', model: 'ready' }, { building: true });
  assert.deepEqual(values, {
    'tritonChatglm.serverState': 'running', 'tritonChatglm.modelState': 'ready',
    'tritonChatglm.serverMode': 'managed', 'tritonChatglm.building': true,
  });
  assert.equal(LIFECYCLE_ACTIONS.length, new Set(LIFECYCLE_ACTIONS).size);
});

test('the evaluator itself distinguishes true from false', () => {
  assert.equal(evaluate('a == x && b =~ /^(y|z)$/', { a: 'x', b: 'z' }), true);
  assert.equal(evaluate('a == x && b =~ /^(y|z)$/', { a: 'x', b: 'q' }), false);
  assert.equal(evaluate('!c', { c: true }), false);
  assert.throws(() => evaluate('(a)', {}));
});
