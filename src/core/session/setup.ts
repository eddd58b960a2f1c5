// The setup model: what the setup checklist shows until the model is ready — each preflight check with its level
// and the one-click fixes that help, the one action to take next, and whether a failure means "setup needed"
// (a missing prerequisite) rather than "server error". Pure: the front ends word it and run the fixes.
import {
  isBlocking, isServerError, PREFLIGHT_CHECKS, type CheckLevel, type PreflightCheck, type PreflightCheckId, type PreflightReport,
  type ServerError, type ServerErrorCode,
} from '../server';
import type { SettingKey } from '../settings/settingsSchema';
import type { LifecycleFailure, LifecycleState } from '../state/lifecycle';

/** One click that fixes (or shows how to fix) a check. */
export type SetupFix =
  | 'downloadWeights'
  | 'cancelDownload'
  | 'chooseWeights'
  | 'buildImage'
  | 'cancelBuild'
  | 'installDocker'
  | 'startDocker'
  | 'dockerPermissions'
  | 'installNvidiaToolkit'
  | 'openSettings'
  | 'showLogs';

/** Fixes that are documentation: the front end opens the page (in VS Code through the host, never the webview). */
export const SETUP_LINKS = {
  installDocker: 'https://docs.docker.com/engine/install/',
  startDocker: 'https://docs.docker.com/engine/daemon/start/',
  dockerPermissions: 'https://docs.docker.com/engine/install/linux-postinstall/',
  installNvidiaToolkit: 'https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html',
} as const satisfies Partial<Record<SetupFix, string>>;


/** The setting a check's "Open Settings" leads to. */
export const CHECK_SETTINGS: Readonly<Record<PreflightCheckId, SettingKey>> = {
  docker: 'dockerPath',
  daemon: 'dockerPath',
  'nvidia-runtime': 'gpus',
  image: 'image',
  weights: 'weightsPath',
  ports: 'httpPort',
  'gpu-memory': 'gpus',
};

/** The check that owns an error code: a start that failed with one of these lacks a prerequisite. */
const CHECK_OF_CODE: Partial<Record<ServerErrorCode, PreflightCheckId>> = {
  'docker-missing': 'docker',
  'daemon-unreachable': 'daemon',
  'permission-denied': 'daemon',
  'nvidia-runtime-missing': 'nvidia-runtime',
  'image-missing': 'image',
  'weights-missing': 'weights',
  'weights-invalid': 'weights',
  'files-unreadable': 'weights',
  'port-allocated': 'ports',
  'gpu-memory-low': 'gpu-memory',
};

/** Whether a failed start means "setup needed": a prerequisite is missing, nothing broke. */
export function isSetupProblem(error: unknown): error is ServerError {
  return isServerError(error) && CHECK_OF_CODE[error.code] !== undefined;
}

/**
 * A start that passed the preflight can still fail on a prerequisite `docker run` alone can prove (no GPU runtime
 * although the check could only warn, a port taken meanwhile): the checklist then shows that check as failed.
 */
export function withStartFailure(report: PreflightReport | undefined, error: ServerError): PreflightReport {
  const id = CHECK_OF_CODE[error.code];
  const checks = PREFLIGHT_CHECKS.map((checkId): PreflightCheck => {
    const known = report?.checks.find((c) => c.id === checkId) ?? { id: checkId, level: 'unknown' as const };
    return checkId === id ? { id: checkId, level: 'error', error, ...(known.facts ? { facts: known.facts } : {}) } : known;
  });
  return { ok: false, checks, firstError: checks.find((c) => c.level === 'error')?.error ?? error };
}

/** What to do about one check. A failed daemon check says which fix: start it, or the permissions. */
export function fixesFor(check: PreflightCheck, building: boolean, downloading = false): SetupFix[] {
  if (check.id === 'image' && building) return ['cancelBuild'];
  if (check.id === 'weights' && downloading) return ['cancelDownload'];
  if (check.level !== 'error' && check.level !== 'warning') return [];
  const code = check.error?.code;
  switch (check.id) {
    case 'docker': return ['installDocker', 'openSettings'];
    case 'daemon':
      if (code === 'permission-denied') return ['dockerPermissions'];
      if (code === 'daemon-unreachable') return ['startDocker'];
      return ['showLogs'];
    case 'nvidia-runtime': return ['installNvidiaToolkit'];
    case 'image': return code === 'image-missing' ? ['buildImage', 'openSettings'] : ['showLogs'];
    case 'weights': return ['downloadWeights', 'chooseWeights'];
    case 'ports': return ['openSettings'];
    case 'gpu-memory': return ['openSettings'];
  }
}

export type SetupItemLevel = CheckLevel | 'pending';

export interface SetupItem extends Omit<PreflightCheck, 'level'> {
  /** `pending`: not known yet (the first check runs, or the image is being built). */
  level: SetupItemLevel;
  fixes: SetupFix[];
}

/**
 * - `checking`: the first checks run; nothing is known yet.
 * - `needed`: something is missing (the lifecycle is "setup needed"); the one action is Re-check.
 * - `ready`: nothing is missing; the one action is Start ChatGLM.
 * - `busy`: the server starts or stops, or the model loads or unloads.
 * - `running`: the server runs without the model; the one action (Start ChatGLM) loads it.
 */
export type SetupPhase = 'checking' | 'needed' | 'ready' | 'busy' | 'running';

export type SetupPrimary = 'startChatglm' | 'recheck';

export interface SetupModel {
  /** Shown in the chat view: a managed server whose model is not ready. */
  visible: boolean;
  phase: SetupPhase;
  /** A check runs now (Re-check waits for it). */
  checking: boolean;
  /** The checks, in PREFLIGHT_CHECKS order; empty once the server runs (its setup is proven). */
  items: SetupItem[];
  /** Items that need the person: the failed checks (what waits on them is counted in `waiting`). */
  attention: number;
  /** Checks that could not run yet because an earlier one failed ("checked once Docker is installed"). */
  waiting: number;
  primary: SetupPrimary | undefined;
  /** What failed last (a crash, a failed load), shown with the checklist. */
  failure?: LifecycleFailure;
}

export interface SetupInput {
  state: LifecycleState;
  report: PreflightReport | undefined;
  checking: boolean;
  building: boolean;
  /** The weights download runs (its check shows as in progress, with Cancel Download). */
  downloading?: boolean;
}

export function setupModel({ state, report, checking, building, downloading = false }: SetupInput): SetupModel {
  const hidden: SetupModel = { visible: false, phase: 'running', checking, items: [], attention: 0, waiting: 0, primary: undefined };
  if (state.mode !== 'managed' || (state.server === 'running' && state.model === 'ready')) return hidden;
  const failure = state.server === 'error' ? state.serverError : state.model === 'failed' ? state.modelError : undefined;
  const withFailure = (m: SetupModel): SetupModel => (failure ? { ...m, failure } : m);
  if (state.server === 'running') {
    const loadable = state.model === 'unloaded' || state.model === 'failed';
    return withFailure({ visible: true, phase: loadable ? 'running' : 'busy', checking, items: [], attention: 0, waiting: 0, primary: loadable ? 'startChatglm' : undefined });
  }
  const items = PREFLIGHT_CHECKS.map((id): SetupItem => {
    const check = report?.checks.find((c) => c.id === id);
    if (!check) return { id, level: 'pending', fixes: [] };
    const item: SetupItem = { ...check, fixes: fixesFor(check, building, downloading) };
    return (id === 'image' && building) || (id === 'weights' && downloading) ? { ...item, level: 'pending' } : item;
  });
  // A check that waits on another ("checked once Docker is installed") blocks a start but is nothing to do: the
  // count names what needs the person, the waiting ones apart.
  const blocking = report ? report.checks.filter(isBlocking) : [];
  const attention = blocking.filter((c) => c.level === 'error').length;
  const waiting = blocking.length - attention;
  if (state.server === 'starting' || state.server === 'stopping') {
    return { visible: true, phase: 'busy', checking, items, attention, waiting, primary: undefined };
  }
  if (!report) return { visible: true, phase: 'checking', checking: true, items, attention: 0, waiting: 0, primary: undefined };
  const phase: SetupPhase = report.ok ? 'ready' : 'needed';
  return withFailure({ visible: true, phase, checking, items, attention, waiting, primary: report.ok ? 'startChatglm' : 'recheck' });
}

/** The one action (`primary`) or a check's fix, as a click in the checklist asks for it. */
export type SetupAction = SetupPrimary | SetupFix;

export function isSetupPrimary(action: SetupAction): action is SetupPrimary {
  return action === 'startChatglm' || action === 'recheck';
}

/**
 * Whether the checklist offers `action` now: a click on a checklist drawn before the state moved (or a message
 * the checklist never offered) does nothing. Re-check stays offered while everything passes.
 */
export function setupActionOffered(model: SetupModel, action: SetupAction, check: PreflightCheckId | undefined): boolean {
  if (isSetupPrimary(action)) return model.primary === action || (action === 'recheck' && model.phase === 'ready');
  return model.items.find((i) => i.id === check)?.fixes.includes(action) ?? false;
}

/** Context keys for walkthrough steps and menus: which parts of the setup are known to be done. */
export const SETUP_CONTEXT_KEYS = {
  dockerReady: 'tritonChatglm.setup.dockerReady',
  gpuRuntimeReady: 'tritonChatglm.setup.gpuRuntimeReady',
  imageReady: 'tritonChatglm.setup.imageReady',
  weightsReady: 'tritonChatglm.setup.weightsReady',
  /** A question or an explanation was answered in this window (the walkthrough's last step). */
  answered: 'tritonChatglm.setup.answered',
} as const;

export function setupContextValues(state: LifecycleState, report: PreflightReport | undefined): Record<string, boolean> {
  // A server of ours that runs proves Docker, its daemon, the GPU runtime, the image and the weights.
  const proven = state.mode === 'managed' && (state.server === 'running' || state.server === 'stopping');
  const ok = (...ids: PreflightCheckId[]) => proven || ids.every((id) => report?.checks.find((c) => c.id === id)?.level === 'ok');
  return {
    [SETUP_CONTEXT_KEYS.dockerReady]: ok('docker', 'daemon'),
    [SETUP_CONTEXT_KEYS.gpuRuntimeReady]: ok('nvidia-runtime'),
    [SETUP_CONTEXT_KEYS.imageReady]: ok('image'),
    [SETUP_CONTEXT_KEYS.weightsReady]: ok('weights'),
  };
}

/** Settings whose change can turn a check green or red: the checks run again when one changes. */
export const SETUP_SETTING_KEYS: readonly SettingKey[] = [
  'serverMode', 'dockerPath', 'image', 'model', 'weightsPath', 'httpPort', 'grpcPort', 'metricsPort', 'bindAddress', 'gpus', 'gpuIds', 'instanceCount',
];
