import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { actionMenu, DESTRUCTIVE_ACTIONS, type MenuEntry } from '../../../src/core/state/actionMenu';
import type { LifecycleState } from '../../../src/core/state/lifecycle';

const names = (entries: MenuEntry[]) => entries.map((e) => (e.kind === 'action' ? e.action : e.kind === 'command' ? e.command : '---'));
const state = (s: Partial<LifecycleState>): LifecycleState => ({ mode: 'managed', server: 'running', model: 'ready', ...s } as LifecycleState);
const ctx = { building: false };

describe('the status bar menu', () => {
  it('ready: the chat, Server Status and the logs first; Reload, Unload, Restart, Stop last after a separator', () => {
    assert.deepEqual(names(actionMenu(state({}), ctx)), [
      'openChat', 'showStatus', 'showLogs', 'buildImage', 'chooseWeightsFolder', 'openWalkthrough', 'openSettings',
      '---', 'load', 'unload', 'restart', 'stop',
    ]);
  });

  it('the first entry (what Enter picks) is never destructive, in any state', () => {
    for (const server of ['stopped', 'setup', 'starting', 'running', 'stopping', 'error'] as const) {
      for (const model of ['unloaded', 'loading', 'ready', 'unloading', 'failed'] as const) {
        for (const mode of ['managed', 'external'] as const) {
          const entries = actionMenu(state({ server, model, mode }), ctx);
          const first = entries[0]!;
          assert.equal(first.kind, 'command', `${mode} ${server} ${model}`);
          const sep = entries.findIndex((e) => e.kind === 'separator');
          const destructive = entries.flatMap((e, i) => (e.kind === 'action' && DESTRUCTIVE_ACTIONS.includes(e.action) ? [i] : []));
          if (destructive.length) assert.ok(sep >= 0 && destructive.every((i) => i > sep), `${mode} ${server} ${model}: ${names(entries).join(',')}`);
          else assert.equal(sep, -1);
        }
      }
    }
  });

  it('not loaded: Load comes right after the logs; setup needed: the checklist first', () => {
    assert.deepEqual(names(actionMenu(state({ model: 'unloaded' }), ctx)).slice(0, 5), ['openChat', 'showStatus', 'showLogs', 'startChatglm', 'load']);
    assert.deepEqual(names(actionMenu(state({ server: 'setup', model: 'unloaded' }), ctx)).slice(0, 4), ['showSetupChecklist', 'showLogs', 'startChatglm', 'start']);
    assert.deepEqual(names(actionMenu(state({ mode: 'external', model: 'unloaded' }), ctx)), ['openChat', 'showStatus', 'showLogs', 'startChatglm', 'load', 'openSettings']);
  });
});
