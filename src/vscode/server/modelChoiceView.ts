// The setup checklist's model choice in words (the facts are the core's, src/core/models/modelChoices.ts): each
// catalog model's download size, whether it fits this GPU and in which precision, its licence's key terms in the
// display language; and what its buttons do (Choose sets tritonChatglm.model, Licence opens the licence's page).
import * as vscode from 'vscode';
import { catalogModel, isModelId, modelChoices, type ModelChoice } from '../../core/models';
import { gib } from '../../core/server';
import type { SetupItem, SetupModel } from '../../core/session';
import { toModelSettings } from '../../core/settings/settingsMapping';
import { formatBytes } from '../../core/weights';
import { LIMITS, type SetupModelMessage, type SetupModelView } from '../../protocol';
import { clip } from '../chat/chatViewState';
import type { SettingsService } from '../config/settingsService';
import type { Log } from '../log';

/** The rows for the checklist, sized for the first selected GPU the last check measured. */
export function modelChoiceRows(model: SetupModel, settings: SettingsService): SetupModelView[] {
  const gpu = gpuItem(model)?.facts?.gpus?.[0];
  const copies = Math.max(1, settings.current.instanceCount);
  const free = gpu ? (gpu.freeMiB * 2 ** 20) / copies : undefined;
  return modelChoices(settings.current.model, free, toModelSettings(settings.current)).map((c) => ({
    id: c.id,
    label: clip(c.displayName, LIMITS.title),
    chosen: c.chosen,
    detail: clip(`${sizeText(c)} ${fitText(c)}`, LIMITS.errorText),
    fit: c.fit.kind === 'runs' ? 'ok' : c.fit.kind === 'too-small' ? 'warning' : 'unknown',
    // One line per model (the checklist must fit the view): the licence's name and what it says of commercial use;
    // its key terms are shown before a download, and Licence opens it.
    license: clip(`${c.license.name}: ${commercialUseText(c.license.commercialUse)}`, LIMITS.errorText),
  }));
}

function commercialUseText(use: ModelChoice['license']['commercialUse']): string {
  switch (use) {
    case 'allowed': return vscode.l10n.t('commercial use allowed.');
    case 'after-registration': return vscode.l10n.t('free for research; commercial use after registration.');
    case 'not-allowed': return vscode.l10n.t('no commercial use.');
  }
}

function gpuItem(model: SetupModel): SetupItem | undefined {
  return model.items.find((i) => i.id === 'gpu-memory');
}

function sizeText(c: ModelChoice): string {
  return c.downloadBytes === undefined ? vscode.l10n.t('Download size unknown.') : vscode.l10n.t('Download {0}.', formatBytes(c.downloadBytes));
}

function fitText(c: ModelChoice): string {
  const gb = (bytes: number) => gib(bytes / 2 ** 20);
  switch (c.fit.kind) {
    case 'runs': return c.fit.weights === 'int8'
      ? vscode.l10n.t('Fits this GPU with int8 weights ({0} compute; needs {1} GB).', c.fit.dtype, gb(c.fit.neededBytes))
      : vscode.l10n.t('Fits this GPU in {0} (needs {1} GB).', c.fit.dtype, gb(c.fit.neededBytes));
    case 'too-small': return vscode.l10n.t('Does not fit this GPU: needs {0} GB, {1} GB free.', gb(c.fit.neededBytes), gb(c.fit.freeBytes));
    case 'unknown': return vscode.l10n.t('Whether it fits is known once the GPU is checked.');
  }
}

/** A click on Choose or Licence; an id the catalog does not list is refused (the message came from a webview). */
export async function runModelAction({ action, id }: SetupModelMessage, settings: SettingsService, log: Log): Promise<void> {
  const model = isModelId(id) ? catalogModel(id) : undefined;
  if (!model) {
    log.warn(`setup: ignored ${action} of a model the catalog does not list`);
    return;
  }
  if (action === 'license') {
    await vscode.env.openExternal(vscode.Uri.parse(model.license.url));
    return;
  }
  log.info(`setup: ${model.id} chosen`);
  await settings.update('model', model.id);
}
