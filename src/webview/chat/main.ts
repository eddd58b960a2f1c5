// Entry of the chat webview bundle (dist/webview.js). The host's HTML provides <div id="root"> and the stylesheets:
// the panel's (media/chat/chat.css) and the bundle's own (dist/webview.css: the codicon font, imported here).
import '@vscode/codicons/dist/codicon.css';
import { getVsCodeApi } from '../shared/vscodeApi';
import { ChatPanel } from './chatPanel';
import type { PersistedState } from './persistedState';
import type { WebviewToHost } from '../../protocol';

const root = document.getElementById('root') ?? document.body.appendChild(document.createElement('div'));
const panel = new ChatPanel(root, getVsCodeApi<WebviewToHost, PersistedState>());
window.addEventListener('pagehide', () => panel.saveNow());
