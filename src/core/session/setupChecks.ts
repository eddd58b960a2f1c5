// The setup checks of a ServerSession (moved out of serverSession.ts): every preflight check at once while no
// server of ours runs, the last report (what the setup checklist is drawn from), and which check's report wins
// when a check and a start's own checks overlap.
import { planModelConfig, planSettings, requiredMiB, type PreflightOptions, type PreflightReport } from '../server';
import type { ServerState } from '../state/lifecycle';
import { failure } from './observe';
import type { SessionClient, SessionDeps } from './ports';
import type { SessionSettings } from './sessionSettings';
import { withModelWeights } from './sessionWeights';

/** No server of ours runs and none is on its way: the setup checks may run (a running one holds the ports). */
export const serverDown = (server: ServerState) => server === 'stopped' || server === 'setup' || server === 'error';

/** The last setup report and whether a check runs now (what the setup checklist is drawn from). */
export interface SetupSnapshot {
  report: PreflightReport | undefined;
  checking: boolean;
}

export class SetupChecks<C extends SessionClient> {
  /** The last report shown (a start's failure added to it by the session). */
  report: PreflightReport | undefined;
  private checksRunning = 0;
  /** Each check's turn: a report older than the one shown never replaces it. */
  private checkTurn = 0;
  private shownTurn = 0;

  constructor(private readonly deps: SessionDeps<C>) {}

  private get state() {
    return this.deps.state;
  }

  /** The last setup report and whether a check runs now. */
  get snapshot(): SetupSnapshot {
    return { report: this.report, checking: this.checksRunning > 0 };
  }

  /** The turn of a start's own checks (its report replaces those of checks begun before it). */
  nextTurn(): number {
    return ++this.checkTurn;
  }

  /**
   * Runs every setup check at once (managed mode, while no server runs: a running one holds the ports and has
   * proven its setup). A missing prerequisite makes the lifecycle "setup needed"; all passing ends it. Resolves
   * with the report (undefined in external mode; the last one while a server runs).
   */
  async check(): Promise<PreflightReport | undefined> {
    const settings = this.deps.settings();
    if (settings.mode !== 'managed') return undefined;
    if (!serverDown(this.state.current.server)) return this.report;
    const turn = ++this.checkTurn;
    this.checksRunning++;
    this.deps.onSetupChanged?.();
    let container: ReturnType<SessionDeps<C>['createContainer']> | undefined;
    try {
      // The chosen model's weights: the setting when it holds that model, else its snapshot in the Hub cache.
      const resolved = await withModelWeights(settings, this.deps.weightsCaches?.() ?? []);
      container = this.deps.createContainer(resolved.server);
      const report = await container.preflight(gpuPreflight(settings));
      // A start that began meanwhile ran its own checks; this report must not move its state.
      if (serverDown(this.state.current.server)) this.show(report, turn);
      return report;
    } finally {
      container?.dispose();
      this.checksRunning--;
      this.deps.onSetupChanged?.();
    }
  }

  show(report: PreflightReport, turn: number, moveState = true): void {
    if (turn < this.shownTurn) return;
    this.shownTurn = turn;
    this.report = report;
    if (moveState) {
      if (report.firstError) this.state.dispatch({ type: 'setupNeeded', error: failure(report.firstError) });
      else this.state.dispatch({ type: 'setupComplete' });
    }
    this.deps.onSetupChanged?.();
  }
}

/**
 * One copy of the chosen model per instance on each selected GPU, each as the memory plan sizes it for the model
 * settings (the smallest the quantization setting allows: int8 for `auto`), and the plan's verdict for the
 * checklist's GPU line.
 */
export function gpuPreflight(settings: SessionSettings): Pick<PreflightOptions, 'requiredGpuMiB' | 'gpuPlan'> {
  const copies = settings.model.instanceCount ?? 1;
  // The chosen model's shapes (GLM-4-9B needs more than ChatGLM3-6B); the default's when the catalog lacks it.
  const config = planModelConfig(settings.server.model);
  const plan = planSettings(settings.model, config);
  return { requiredGpuMiB: requiredMiB(plan, config) * copies, gpuPlan: { settings: plan, copies, ...(config ? { config } : {}) } };
}
