// Entry of the chat webview bundle (dist/webview.js). The host's HTML provides <div id="root"> and the stylesheet.
import { getVsCodeApi } from '../shared/vscodeApi';
import { ChatPanel } from './chatPanel';
import type { PersistedState } from './persistedState';
import type { WebviewToHost } from '../../protocol';

const root = document.getElementById('root') ?? document.body.appendChild(document.createElement('div'));
const panel = new ChatPanel(root, getVsCodeApi<WebviewToHost, PersistedState>());
window.addEventListener('pagehide', () => panel.saveNow());
