// What happens when a setting changes: a reconnect is done at once; a change that needs a model reload or a
// server restart says so and offers the action (never done behind the user's back: it interrupts answers); another
// model chosen while the server runs offers the switch (unload, restart with its weights, load) as one action.
import * as vscode from 'vscode';
import { SETUP_SETTING_KEYS } from '../core/session';
import type { SettingKey } from '../core/settings/settingsSchema';
import type { SettingsChange, SettingsService } from './config/settingsService';
import type { Log } from './log';
import type { ServerController } from './server/serverController';
import type { LifecycleStore } from './state/lifecycleStore';

const CONTAINER_KEYS = new Set<SettingKey>(['dockerPath', 'containerName', 'httpPort', 'grpcPort', 'metricsPort', 'bindAddress', 'image']);

export function reactToSettings(settings: SettingsService, server: ServerController, store: LifecycleStore, log: Log): vscode.Disposable {
  return settings.onDidChange((change) => void react(change, server, store, log));
}

async function react(change: SettingsChange, server: ServerController, store: LifecycleStore, log: Log): Promise<void> {
  log.info(`settings changed: ${change.keys.join(', ')} (${change.effect})`);
  const s = store.current;
  // A setting the setup checks read (a weights folder chosen, another docker path or port): check again, so the
  // setup checklist and "setup needed" follow the settings while no server runs.
  if (s.mode === 'managed' && (s.server === 'stopped' || s.server === 'setup' || s.server === 'error')
    && change.effect !== 'reconnect' && change.keys.some((k) => SETUP_SETTING_KEYS.includes(k))) {
    if (change.keys.some((k) => CONTAINER_KEYS.has(k)) && s.server !== 'error') await server.attach();
    await server.setup.recheck();
    return;
  }
  // Settings can arrive after activation (a remote window's configuration loads late): while nothing is
  // attached, a changed docker path, container name or port may point at our running container, so look again.
  if (change.effect !== 'reconnect' && s.mode === 'managed' && s.server === 'stopped' && change.keys.some((k) => CONTAINER_KEYS.has(k))) {
    await server.attach();
    return;
  }
  // Another model chosen while ours runs: its weights are mounted per container, so the switch is a restart.
  const pending = change.keys.includes('model') && s.mode === 'managed' && s.server === 'running' ? server.pendingSwitch : undefined;
  if (pending) {
    const restart = vscode.l10n.t('Restart with {0}', pending.toName);
    const picked = await vscode.window.showInformationMessage(vscode.l10n.t(
      '{0} is chosen and the server runs {1}. Each model\'s weights are mounted into the server\'s container, so switching restarts the server: {1} is unloaded, the server restarts with {0}\'s weights and {0} is loaded.',
      pending.toName, pending.fromName), restart);
    if (picked === restart) await server.switchModel();
    return;
  }
  switch (change.effect) {
    case 'none':
      return;
    case 'reconnect':
      await server.reconnect();
      return;
    case 'reloadModel': {
      if (s.server !== 'running' || (s.model !== 'ready' && s.model !== 'failed')) return;
      const reload = vscode.l10n.t('Reload Model');
      const picked = await vscode.window.showInformationMessage(
        vscode.l10n.t('The changed settings ({0}) take effect when the model is reloaded.', change.keys.join(', ')), reload);
      if (picked === reload) await server.load();
      return;
    }
    case 'restartServer': {
      if (s.mode !== 'managed' || s.server !== 'running') return;
      const restart = vscode.l10n.t('Restart Server');
      const picked = await vscode.window.showInformationMessage(
        vscode.l10n.t('The changed settings ({0}) take effect when the server is restarted.', change.keys.join(', ')), restart);
      if (picked === restart) await server.restart();
      return;
    }
  }
}
