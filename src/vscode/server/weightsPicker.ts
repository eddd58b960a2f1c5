// "Choose Weights Folder…": a folder picker on the machine the extension runs on (the remote one in a remote
// window), the folder checked with the core's weights check (or its only sub-folder that is a checkpoint), and
// the setting written where it applies (SettingsService.update: remote settings in a remote window).
import * as vscode from 'vscode';
import { chosenModel } from '../../core/models/choice';
import { isServerError, locateWeights, WeightsError } from '../../core/server';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError } from '../errors/presentError';
import type { Log } from '../log';
import { weightsText } from './setupView';

/** Resolves with the folder now set, or undefined when the person gave up. */
export async function chooseWeightsFolder(settings: SettingsService, log: Log): Promise<string | undefined> {
  let start = settings.current.weightsPath;
  const model = chosenModel(settings.current.model);
  for (;;) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      title: vscode.l10n.t('Choose the {0} weights folder', model.displayName),
      openLabel: vscode.l10n.t('Use as Weights Folder'),
      ...(start ? { defaultUri: vscode.Uri.file(start) } : {}),
    });
    const uri = picked?.[0];
    if (!uri) return undefined;
    if (uri.scheme !== 'file') {
      // A folder of another file system (a virtual one) cannot be mounted into the container.
      void vscode.window.showErrorMessage(vscode.l10n.t('Choose a folder on the machine that runs Docker.'));
      return undefined;
    }
    const dir = uri.fsPath;
    try {
      const found = await locateWeights(dir, model);
      await settings.update('weightsPath', found);
      log.info(`weightsPath set to ${found}${found !== dir ? ` (the checkpoint inside ${dir})` : ''}`);
      return found;
    } catch (e) {
      if (!isServerError(e)) throw e;
      log.warn(`weights folder refused: ${e.message}`);
      const again = vscode.l10n.t('Choose Another Folder…');
      const text = e instanceof WeightsError ? weightsText(e) : errorText(presentError(e));
      if ((await vscode.window.showErrorMessage(text, again)) !== again) return undefined;
      start = dir;
    }
  }
}
