// Holds the one LifecycleState of this window, applies events through the pure state machine and mirrors the
// result into context keys (menus, enablement) and an event for the status bar, chat panel and status panel.
import * as vscode from 'vscode';
import { contextKeyValues, type ActionContext } from '../../core/state/actions';
import { initialState, transition, type LifecycleEvent, type LifecycleState, type ServerMode } from '../../core/state/lifecycle';
import type { Log } from '../log';

export class LifecycleStore implements vscode.Disposable {
  private state: LifecycleState;
  private ctx: ActionContext = { building: false };
  private readonly emitter = new vscode.EventEmitter<LifecycleState>();
  readonly onDidChange = this.emitter.event;

  constructor(mode: ServerMode, private readonly log: Log) {
    this.state = initialState(mode);
    this.publish();
  }

  get current(): LifecycleState {
    return this.state;
  }

  get actionContext(): ActionContext {
    return this.ctx;
  }

  /** Applies an event; returns false (and changes nothing) when it is not valid now. */
  dispatch(event: LifecycleEvent): boolean {
    const { state, accepted } = transition(this.state, event);
    if (!accepted) {
      this.log.debug(`lifecycle: ignored ${event.type} in ${this.state.server}/${this.state.model}`);
      return false;
    }
    if (state.server !== this.state.server || state.model !== this.state.model) {
      this.log.info(`lifecycle: ${event.type}: server ${this.state.server} → ${state.server}, model ${this.state.model} → ${state.model}`);
    }
    this.state = state;
    this.publish();
    return true;
  }

  setBuilding(building: boolean): void {
    this.ctx = { ...this.ctx, building };
    this.publish();
  }

  private publish(): void {
    for (const [key, value] of Object.entries(contextKeyValues(this.state, this.ctx))) {
      void vscode.commands.executeCommand('setContext', key, value);
    }
    this.emitter.fire(this.state);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
