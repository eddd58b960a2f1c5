// The chat panel's state message names the model the server serves (else the chosen one): the panel's placeholder,
// state lines and role labels read its display name from there, and each answer carries the name of the model that
// wrote it. With GLM-4 served and ChatGLM3 chosen (the default), nothing may say ChatGLM3.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Conversation } from '../../../src/core/chat/conversation';
import type { LifecycleState } from '../../../src/core/state/lifecycle';
import { isProtocolError, parseHostToWebview, type StateMessage } from '../../../src/protocol';
import { createFakeVscode, installVscodeModule } from './support/fakeVscode';

type ViewStateModule = typeof import('../../../src/vscode/chat/chatViewState');

let uninstall: () => void;
let viewState: ViewStateModule;
before(() => {
  uninstall = installVscodeModule(createFakeVscode({}).vscode); // tritonChatglm.model unset: ChatGLM3-6B is chosen
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  viewState = require('../../../src/vscode/chat/chatViewState') as ViewStateModule;
});
after(() => uninstall?.());

const conversation: Conversation = {
  id: 'c1', title: 'Reverse a list', createdAt: 1, updatedAt: 4,
  messages: [
    { id: 'u1', role: 'user', content: 'How?', status: 'complete', createdAt: 1 },
    { id: 'a1', role: 'assistant', content: 'Saved before answers named their model.', status: 'complete', createdAt: 2 },
    { id: 'u2', role: 'user', content: 'Again?', status: 'complete', createdAt: 3 },
    { id: 'a2', role: 'assistant', content: 'xs[::-1]', status: 'complete', createdAt: 4, model: 'glm-4-9b-chat' },
  ],
};

function state(lifecycle: LifecycleState, served: string): StateMessage {
  const message = viewState.stateMessage(conversation, false, lifecycle, served);
  const parsed = parseHostToWebview(message);
  assert.ok(!isProtocolError(parsed), `the webview accepts it: ${JSON.stringify(parsed)}`);
  assert.equal(parsed.type, 'state');
  return parsed as StateMessage;
}

test('GLM-4 served: the state names it, and the answer it wrote carries its name; an older answer none', () => {
  const s = state({ mode: 'managed', server: 'running', model: 'ready' }, 'glm-4-9b-chat');
  assert.equal(s.modelName, 'GLM-4-9B-Chat');
  const [, old, , answer] = s.messages;
  assert.equal(answer!.modelName, 'GLM-4-9B-Chat');
  assert.equal(answer!.model, 'GLM-4-9B-Chat (glm-4-9b-chat)');
  assert.equal(old!.modelName, undefined, 'the panel labels it with the state\'s model');
});

test('a failed load names the model the server was loading, not the chosen default', () => {
  const s = state({ mode: 'managed', server: 'running', model: 'failed', modelError: { code: 'model-load-failed', message: 'CUDA out of memory' } }, 'glm-4-9b-chat');
  assert.equal(s.server.reason, 'GLM-4-9B-Chat failed to load: CUDA out of memory');
});

test('no server: the chosen model is named (the session passes its name); a name the catalog lacks is shown as it is', () => {
  assert.equal(state({ mode: 'managed', server: 'stopped', model: 'unloaded' }, 'codegeex4-all-9b').modelName, 'CodeGeeX4-ALL-9B');
  assert.equal(state({ mode: 'external', server: 'running', model: 'ready' }, 'my-model').modelName, 'my-model');
});

test('an answer stored with an empty model name (a hand-edited file) still reaches the panel, labelled like an old one', () => {
  const edited: Conversation = { ...conversation, messages: [{ ...conversation.messages[1]!, model: '' }] };
  const parsed = parseHostToWebview(viewState.stateMessage(edited, false, { mode: 'managed', server: 'running', model: 'ready' }, 'glm-4-9b-chat'));
  assert.ok(!isProtocolError(parsed), JSON.stringify(parsed));
  assert.equal((parsed as StateMessage).messages[0]!.modelName, undefined);
});
