// Registers every command of the extension; each one is a thin call into a service of the root.
import * as vscode from 'vscode';
import { CONTINUE_IN_CHAT_COMMAND, DISMISS_EXPLANATION_COMMAND } from './explain/explainController';
import { SettingsService } from './config/settingsService';
import type { ExtensionServices } from './services';
import { SHOW_ACTIONS_COMMAND, showActionsQuickPick } from './statusBar';

export function registerCommands(x: ExtensionServices): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, fn as (...args: unknown[]) => unknown);
  return [
    reg('tritonChatglm.startServer', () => x.server.start()),
    reg('tritonChatglm.stopServer', () => x.server.stop()),
    reg('tritonChatglm.restartServer', () => x.server.restart()),
    reg('tritonChatglm.loadModel', () => x.server.load()),
    reg('tritonChatglm.unloadModel', () => x.server.unload()),
    reg('tritonChatglm.openChat', () => x.chatView.reveal()),
    reg('tritonChatglm.newChat', async () => {
      await x.chatView.reveal();
      x.chat.newChat();
    }),
    reg('tritonChatglm.explainSelection', () => x.explain.explainSelections(vscode.window.activeTextEditor)),
    reg('tritonChatglm.showServerLogs', () => x.log.show()),
    reg('tritonChatglm.showServerStatus', () => x.statusPanel.show()),
    reg('tritonChatglm.buildServingImage', () => x.server.buildImage()),
    reg('tritonChatglm.cancelBuild', () => x.server.cancelBuild()),
    reg('tritonChatglm.openSettings', () => SettingsService.open()),
    reg(SHOW_ACTIONS_COMMAND, () => showActionsQuickPick(x.lifecycle)),
    reg(CONTINUE_IN_CHAT_COMMAND, (thread: vscode.CommentThread) => x.explain.continueInChat(thread)),
    reg(DISMISS_EXPLANATION_COMMAND, (thread: vscode.CommentThread) => x.explain.dismiss(thread)),
  ];
}
