import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { actionMenu, DESTRUCTIVE_ACTIONS, type MenuGroup } from '../../../src/core/state/actionMenu';
import { MODEL_STATES, SERVER_STATES, type LifecycleState } from '../../../src/core/state/lifecycle';

/** The menu as text: each group as "name: entry, entry". */
const shape = (groups: MenuGroup[]) => groups.map((g) => `${g.group}: ${g.entries.map((e) => (e.kind === 'action' ? e.action : e.command)).join(', ')}`);
const state = (s: Partial<LifecycleState>): LifecycleState => ({ mode: 'managed', server: 'running', model: 'ready', ...s } as LifecycleState);
const ctx = { building: false };

describe('the status bar menu', () => {
  it('ready: the chat and Server Status; no setup actions; Reload and Unload under Model, Restart and Stop under Server', () => {
    assert.deepEqual(shape(actionMenu(state({}), ctx)), [
      'next: openChat, showStatus',
      'help: showLogs, openSettings',
      'model: load, unload',
      'server: restart, stop',
    ]);
  });

  it('setup needed: the checklist and Start ChatGLM (never Start Server too), the setup actions grouped', () => {
    assert.deepEqual(shape(actionMenu(state({ server: 'setup', model: 'unloaded' }), ctx)), [
      'next: showSetupChecklist, startChatglm',
      'setup: recheckSetup, chooseWeightsFolder, buildImage, openWalkthrough',
      'help: showLogs, openSettings',
    ]);
    // While the image builds, Build Serving Image is not offered again.
    assert.deepEqual(shape(actionMenu(state({ server: 'setup', model: 'unloaded' }), { building: true }))[1], 'setup: recheckSetup, chooseWeightsFolder, openWalkthrough');
  });

  it('stopped: Start ChatGLM first, Start Server as the other way; weights and image still changeable', () => {
    assert.deepEqual(shape(actionMenu(state({ server: 'stopped', model: 'unloaded' }), ctx)), [
      'next: openChat, startChatglm, start',
      'setup: chooseWeightsFolder, buildImage',
      'help: showLogs, openSettings',
    ]);
  });

  it('running, not loaded: Load Model (Start ChatGLM would only load); loading: its cancel under Model', () => {
    assert.deepEqual(shape(actionMenu(state({ model: 'unloaded' }), ctx)), [
      'next: openChat, load, showStatus',
      'help: showLogs, openSettings',
      'server: restart, stop',
    ]);
    assert.deepEqual(shape(actionMenu(state({ model: 'loading' }), ctx)), [
      'next: openChat, showStatus',
      'help: showLogs, openSettings',
      'model: unload',
      'server: restart, stop',
    ]);
  });

  it('an external server: nothing to start, stop or set up', () => {
    assert.deepEqual(shape(actionMenu(state({ mode: 'external', model: 'unloaded' }), ctx)), [
      'next: openChat, load, showStatus',
      'help: showLogs, openSettings',
    ]);
  });

  it('in every state: the first entry is a command, destructive actions only in the model and server groups, no entry twice, no empty group', () => {
    for (const server of SERVER_STATES) {
      for (const model of MODEL_STATES) {
        for (const mode of ['managed', 'external'] as const) {
          for (const building of [false, true]) {
            const groups = actionMenu(state({ server, model, mode }), { building });
            const label = `${mode} ${server} ${model} ${building}: ${shape(groups).join(' | ')}`;
            assert.equal(groups[0]?.group, 'next', label);
            assert.equal(groups[0]?.entries[0]?.kind, 'command', label);
            for (const g of groups) {
              assert.ok(g.entries.length > 0, label);
              for (const e of g.entries) {
                if (e.kind === 'action' && DESTRUCTIVE_ACTIONS.includes(e.action)) assert.ok(g.group === 'model' || g.group === 'server', label);
              }
            }
            const all = shape(groups).join(', ').replace(/\w+: /g, '').split(', ');
            assert.equal(new Set(all).size, all.length, label);
            // Start ChatGLM and Start Server are never offered together while the setup is needed.
            if (server === 'setup') assert.ok(!all.includes('start'), label);
          }
        }
      }
    }
  });
});
