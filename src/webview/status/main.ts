// Entry of the Server Status view bundle (dist/status.js). The host's HTML provides <div id="root"> and the
// stylesheet; every message is validated before it touches the page.
import { isProtocolError, parseHostToStatusView, type StatusViewToHost } from '../../protocol';
import { getVsCodeApi } from '../shared/vscodeApi';
import { StatusPage } from './statusPage';

const root = document.getElementById('root') ?? document.body.appendChild(document.createElement('div'));
const page = new StatusPage(root);
const api = getVsCodeApi<StatusViewToHost>();

window.addEventListener('message', (e: MessageEvent) => {
  const message = parseHostToStatusView(e.data);
  if (isProtocolError(message)) {
    console.warn(`status webview: ${message.error}`);
    return;
  }
  if (message.type === 'layout') page.showLayout(message);
  else page.showUpdate(message);
});
api.postMessage({ type: 'ready' });
