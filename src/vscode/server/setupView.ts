// The core's setup model in words: each check's name and what it found or what to do (localized here; the core
// keeps codes and facts), the headline, and the `setup` message the chat view's checklist is drawn from.
import * as vscode from 'vscode';
import { chosenModelNow } from '../config/chosenModel';
import { CHATGLM3_FP16_MIB, gib, ServerError, WeightsError, type CheckFacts, type GpuMemory, type GpuPlanVerdict, type PreflightCheckId } from '../../core/server';
import type { SetupFix, SetupItem, SetupModel, SetupPhase, SetupPrimary } from '../../core/session';
import type { LifecycleFailure, LifecycleState } from '../../core/state/lifecycle';
import { LIMITS, type HostToWebview, type SetupCheckId, type SetupFixId, type SetupModelView, type SetupPrimaryId, type SetupView } from '../../protocol';
import { clip } from '../chat/chatViewState';
import { errorText, presentError } from '../errors/presentError';

// The protocol spells the core's ids again (it imports nothing of ours); these lines fail to compile if they drift.
const asCheckId = (id: PreflightCheckId): SetupCheckId => id;
const asFixId = (fix: SetupFix): SetupFixId => fix;
const asPrimaryId = (primary: SetupPrimary): SetupPrimaryId => primary;

export function setupMessage(model: SetupModel, state: LifecycleState, models?: SetupModelView[]): HostToWebview {
  const view: SetupView = {
    visible: model.visible,
    phase: model.phase,
    checking: model.checking,
    summary: clip(summary(model, state), LIMITS.errorText),
    items: model.items.map((item) => {
      const detail = itemDetail(item);
      return {
        id: asCheckId(item.id),
        level: item.level,
        label: clip(checkLabel(item.id), LIMITS.title),
        ...(detail ? { detail: clip(detail, LIMITS.errorText) } : {}),
        fixes: item.fixes.map(asFixId),
      };
    }),
  };
  if (model.primary) view.primary = asPrimaryId(model.primary);
  if (model.failure) view.failure = clip(failureText(model.failure), LIMITS.errorText);
  if (models?.length) view.models = models;
  return { type: 'setup', setup: view };
}

/** The chosen model's name, as the checklist's texts say it. */
const name = (): string => chosenModelNow().displayName;

export function checkLabel(id: PreflightCheckId): string {
  switch (id) {
    case 'docker': return vscode.l10n.t('Docker');
    case 'daemon': return vscode.l10n.t('Docker daemon');
    case 'nvidia-runtime': return vscode.l10n.t('NVIDIA Container Toolkit');
    case 'image': return vscode.l10n.t('Serving image');
    case 'weights': return vscode.l10n.t('{0} weights', chosenModelNow().displayName);
    case 'ports': return vscode.l10n.t('Ports');
    case 'gpu-memory': return vscode.l10n.t('GPU memory');
  }
}

function summary(model: SetupModel, state: LifecycleState): string {
  const phases: Record<SetupPhase, () => string> = {
    checking: () => vscode.l10n.t('Checking Docker, the GPU, the serving image, the weights and the ports…'),
    needed: () => [attentionText(model.attention), waitingText(model.waiting)].filter(Boolean).join(' '),
    ready: () => vscode.l10n.t('Everything {0} needs is in place.', name()),
    busy: () => busyText(state),
    running: () => vscode.l10n.t('The server is running; {0} is not loaded yet.', name()),
  };
  return phases[model.phase]();
}

function attentionText(n: number): string {
  if (n === 0) return '';
  return n === 1 ? vscode.l10n.t('1 check needs attention before {0} can start.', name()) : vscode.l10n.t('{0} checks need attention before {1} can start.', n, name());
}

/** Checks that wait on a failed one are not counted as needing attention: they follow once it is fixed. */
function waitingText(n: number): string {
  if (n === 0) return '';
  return n === 1 ? vscode.l10n.t('1 more is checked after that.') : vscode.l10n.t('{0} more are checked after that.', n);
}

function busyText(state: LifecycleState): string {
  if (state.server === 'starting') return vscode.l10n.t('Starting the {0} server…', name());
  if (state.server === 'stopping') return vscode.l10n.t('Stopping the {0} server…', name());
  if (state.model === 'unloading') return vscode.l10n.t('Unloading {0}…', name());
  return vscode.l10n.t('Loading {0} onto the GPU…', name());
}

function itemDetail(item: SetupItem): string | undefined {
  switch (item.level) {
    case 'pending':
      if (item.id === 'weights' && item.fixes.includes('cancelDownload')) return vscode.l10n.t('Downloading {0}… (the notification shows the progress)', chosenModelNow().displayName);
      return item.id === 'image' && item.fixes.includes('cancelBuild') ? vscode.l10n.t('Building the serving image…') : vscode.l10n.t('Checking…');
    case 'ok': return okText(item.id, item.facts ?? {});
    case 'blocked': return item.blockedBy === 'docker' ? vscode.l10n.t('Checked once Docker is installed.') : vscode.l10n.t('Checked once the Docker daemon answers.');
    case 'unknown': return unknownText(item);
    case 'skipped': return undefined;
    case 'error': case 'warning': return problemText(item);
  }
}

function okText(id: PreflightCheckId, facts: CheckFacts): string | undefined {
  switch (id) {
    case 'docker': return facts.dockerVersion ? vscode.l10n.t('Docker {0} is installed.', facts.dockerVersion) : vscode.l10n.t('Docker is installed.');
    case 'daemon': return facts.daemonVersion ? vscode.l10n.t('Docker Engine {0} answers.', facts.daemonVersion) : vscode.l10n.t('The Docker daemon answers.');
    case 'nvidia-runtime':
      if (facts.nvidiaVia === 'hook') return vscode.l10n.t('The NVIDIA Container Toolkit\'s hook is installed.');
      if (facts.nvidiaVia === 'cdi') return vscode.l10n.t('Podman has the NVIDIA CDI devices.');
      return vscode.l10n.t('Docker has the NVIDIA runtime.');
    case 'image': return vscode.l10n.t('{0} is available.', facts.image ?? '');
    case 'weights': return facts.weightsSnapshot === 'newer' && facts.weightsPath
      ? vscode.l10n.t('{0} (a newer snapshot than the one tested)', facts.weightsPath)
      : facts.weightsPath;
    case 'ports': return vscode.l10n.t('{0} are free on {1}.', (facts.ports ?? []).join(', '), facts.bindAddress ?? '');
    case 'gpu-memory': return gpuText(facts);
  }
}

function gpuText(facts: CheckFacts): string | undefined {
  const gpus = facts.gpus ?? [];
  if (!gpus.length) return undefined;
  return gpus.map((g, i) => {
    const verdict = facts.gpuPlans?.[i];
    return verdict ? gpuPlanText(g, verdict) : vscode.l10n.t('GPU {0} ({1}): {2} GB free of {3} GB.', g.index, g.name, gib(g.freeMiB), gib(g.totalMiB));
  }).join(' ');
}

/** What the memory plan says will run on this GPU (the same decision the load makes, src/core/server/memoryPlan.ts). */
function gpuPlanText(g: GpuMemory, v: GpuPlanVerdict): string {
  const gb = (bytes: number) => gib(bytes / 2 ** 20);
  const head = vscode.l10n.t('GPU {0} ({1}): {2} GB free', g.index, g.name, gib(g.freeMiB));
  if (v.kind === 'runs') {
    const p = v.plan;
    return p.quantization === 'int8'
      ? vscode.l10n.t('{0}: {1} runs with int8 weights (about {2} GB) and {3} rows × {4} tokens.', head, chosenModelNow().displayName, gb(p.weights), p.rows, p.context)
      : vscode.l10n.t('{0}: {1} runs with 16-bit weights (about {2} GB) and {3} rows × {4} tokens.', head, chosenModelNow().displayName, gb(p.weights), p.rows, p.context);
  }
  const n = v.needed;
  const short = n.quantization === 'int8'
    ? vscode.l10n.t('{0}: not enough even with int8 weights for {1} rows × {2} tokens (about {3} GB needed)', head, n.rows, n.context, gb(n.total))
    : vscode.l10n.t('{0}: not enough for {1} rows × {2} tokens with 16-bit weights (about {3} GB needed; Quantization auto or int8 needs less)', head, n.rows, n.context, gb(n.total));
  if (!v.fits) return vscode.l10n.t('{0}; the weights alone need about {1} GB.', short, gb(n.weights));
  return vscode.l10n.t('{0}; {1} rows × {2} tokens would fit: lower Max Batch Size or the context.', short, v.fits.rows, v.fits.context);
}

function unknownText(item: SetupItem): string {
  switch (item.unknownReason) {
    case 'mig': return vscode.l10n.t('Unknown for MIG devices; loading the model shows whether it fits.');
    case 'nvidia-smi-failed': return vscode.l10n.t('Unknown: nvidia-smi failed; loading the model shows whether it fits.');
    default: return vscode.l10n.t('Unknown: nvidia-smi is not installed here; loading the model shows whether it fits ({0} needs about {1} GB).', name(), gib(item.facts?.requiredMiB ?? CHATGLM3_FP16_MIB));
  }
}

/** What is wrong and how to fix it, as the error notification words it (with what the checklist adds). */
function problemText(item: SetupItem): string | undefined {
  const error = item.error;
  if (!error) return undefined;
  if (error instanceof WeightsError) return weightsText(error);
  if (error.code === 'weights-missing') {
    const model = chosenModelNow();
    return item.facts?.weightsPath
      ? vscode.l10n.t('The folder {0} does not exist or cannot be read. Choose the folder of the {1} checkpoint.', item.facts.weightsPath, model.displayName)
      : vscode.l10n.t('{0} has no weights yet: no weights folder holds it and the Hugging Face cache has no {1}. Download it, or choose the folder of its checkpoint (config.json, tokenizer.model, *.safetensors).', model.displayName, model.hub.repo);
  }
  if (error.code === 'image-missing') return vscode.l10n.t('{0} is not on this machine. Build it from the extension\'s Dockerfile (the first build downloads several GB), or set another image.', item.facts?.image ?? '');
  if (error.code === 'gpu-memory-low') {
    const gpus = gpuText(item.facts ?? {});
    if (item.facts?.gpuPlans?.length && gpus) return gpus;
    return `${gpus ? `${gpus} ` : ''}${vscode.l10n.t('{0} needs about {1} GB per copy; loading may fail.', chosenModelNow().displayName, gib(item.facts?.requiredMiB ?? 0))}`;
  }
  return errorText(presentError(error));
}

/** What a folder lacks, localized part by part (the weights picker says it too). */
export function weightsText(error: WeightsError): string {
  const parts = error.problems.map((p) => {
    switch (p) {
      case 'no-config': return vscode.l10n.t('config.json is missing');
      case 'config-unreadable': return vscode.l10n.t('config.json is not valid JSON');
      case 'not-chatglm': return vscode.l10n.t('config.json does not describe a ChatGLM model');
      case 'other-model': return error.holds ? vscode.l10n.t('it holds {0}', error.holds) : vscode.l10n.t('its config.json describes a model shape the catalog does not list');
      case 'no-tokenizer': return vscode.l10n.t('tokenizer.model is missing');
      case 'no-weight-files': return vscode.l10n.t('there are no weight files (*.safetensors or *.bin)');
      case 'download-incomplete': return vscode.l10n.t('its download has not finished (download again to resume)');
      case 'files-missing': return vscode.l10n.t('files its weight index or download manifest names are missing');
    }
  });
  return vscode.l10n.t('{0} is not a {1} checkpoint: {2}.', error.path, error.chosen, parts.join(vscode.l10n.t('; ')));
}

/** Codes whose words are localized by presentError (the lifecycle keeps only the code and the English text). */
const WORDED_CODES = new Set<string>([
  'docker-missing', 'daemon-unreachable', 'permission-denied', 'nvidia-runtime-missing', 'image-missing', 'port-allocated',
  'name-conflict', 'container-exited', 'weights-missing', 'weights-invalid', 'liveness-timeout', 'gpu-memory-low', 'ulimit-denied',
  'engine-limits',
] satisfies ServerError['code'][]);

/** A failure the lifecycle keeps (a crash, a failed load, what makes the setup needed), in its notification's words. */
export function failureText(f: LifecycleFailure): string {
  if (f.code === 'model-load-failed') return vscode.l10n.t('{0} failed to load: {1}', name(), f.message);
  if (WORDED_CODES.has(f.code)) return presentError(new ServerError({ code: f.code as ServerError['code'], message: f.message, fix: '' })).message;
  return f.message;
}
