// Entry of the chat webview bundle (dist/webview.js). The host's HTML provides <div id="root"> and the stylesheet.
import { ChatApp } from './app';
import { getVsCodeApi } from './vscode-api';

const root = document.getElementById('root') ?? document.body.appendChild(document.createElement('div'));
const app = new ChatApp(root, getVsCodeApi());
window.addEventListener('pagehide', () => app.saveNow());
