// Holds the one LifecycleState of this window, applies events through the pure state machine and mirrors the
// result into context keys (menus, enablement) and an event for the status bar, chat panel and status panel.
import * as vscode from 'vscode';
import { contextKeyValues, type ActionContext } from '../../core/state/actions';
import { LifecycleMachine, type LifecycleEvent, type LifecycleState, type LifecycleStatePort, type ServerMode } from '../../core/state/lifecycle';
import { VSCODE_COMMANDS } from '../commandIds';
import type { Log } from '../log';

export class LifecycleStore implements LifecycleStatePort, vscode.Disposable {
  private readonly machine: LifecycleMachine;
  private ctx: ActionContext = { building: false };
  private readonly emitter = new vscode.EventEmitter<LifecycleState>();
  readonly onDidChange = this.emitter.event;

  constructor(mode: ServerMode, private readonly log: Log) {
    this.machine = new LifecycleMachine(mode);
    this.publish();
  }

  get current(): LifecycleState {
    return this.machine.current;
  }

  get actionContext(): ActionContext {
    return this.ctx;
  }

  /** Applies an event; returns false (and changes nothing) when it is not valid now. */
  dispatch(event: LifecycleEvent): boolean {
    const before = this.machine.current;
    if (!this.machine.dispatch(event)) {
      this.log.debug(`lifecycle: ignored ${event.type} in ${before.server}/${before.model}`);
      return false;
    }
    const after = this.machine.current;
    if (after.server !== before.server || after.model !== before.model) {
      this.log.info(`lifecycle: ${event.type}: server ${before.server} → ${after.server}, model ${before.model} → ${after.model}`);
    }
    this.publish();
    return true;
  }

  setBuilding(building: boolean): void {
    this.ctx = { ...this.ctx, building };
    this.publish();
  }

  private publish(): void {
    for (const [key, value] of Object.entries(contextKeyValues(this.machine.current, this.ctx))) {
      void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, key, value);
    }
    this.emitter.fire(this.machine.current);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
