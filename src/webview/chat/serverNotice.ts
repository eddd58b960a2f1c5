// The box above the messages while the model is not ready: the server's and the model's state, why, and the
// actions that help (Start Server, Load Model, Open Settings). Hidden once the model is ready.
import { format, type ServerView, type Strings } from '../../protocol';
import { button, el } from '../shared/dom';

export class ServerNotice {
  readonly element = el('section', { class: 'server-status', role: 'status' });

  /** `modelName`: the model the state line names ("GLM-4-9B-Chat is not loaded."). */
  render(server: ServerView | undefined, strings: Strings, modelName: string): void {
    if (!server) {
      this.element.hidden = false;
      this.element.replaceChildren(el('p', {}, strings['server.unknown']));
      return;
    }
    this.element.hidden = server.model === 'ready';
    if (this.element.hidden) return;
    const lines = [
      el('p', { class: 'server-line' }, strings[`server.${server.server}`]),
      el('p', { class: 'server-line' }, format(strings[`model.${server.model}`], modelName)),
    ];
    if (server.reason) lines.push(el('p', { class: 'server-reason' }, server.reason));
    lines.push(el('p', { class: 'server-hint' }, strings.notReady));
    const actions = el('div', { class: 'server-actions' }, ...server.actions.map((action) => button(strings[action], action)));
    this.element.replaceChildren(...lines, actions);
  }
}
