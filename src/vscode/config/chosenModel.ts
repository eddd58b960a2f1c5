// The chosen catalog model as the settings say now, for texts that name it ("GLM-4-9B-Chat weights were not
// found") where no SettingsService is at hand (error presentation). An unknown value names the default, as the
// settings parser falls back to it.
import * as vscode from 'vscode';
import type { CatalogModel } from '../../core/models/catalog';
import { chosenModel, isModelId } from '../../core/models/choice';
import { SECTION } from '../../core/settings/settingsSchema';

export function chosenModelNow(): CatalogModel {
  const value = vscode.workspace.getConfiguration(SECTION).get<unknown>('model');
  return chosenModel(isModelId(value) ? value : undefined);
}
