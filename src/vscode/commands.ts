// Registers every command of the extension; each one is a thin call into a service of the root.
import * as vscode from 'vscode';
import { exportConversation } from './chat/conversationExport';
import { showChatHistory } from './chat/historyPicker';
import { COMMANDS, type CommandName } from './commandIds';
import { SettingsService } from './config/settingsService';
import type { ExtensionServices } from './services';
import { showActionsQuickPick } from './statusBar';

export function registerCommands(services: ExtensionServices): vscode.Disposable[] {
  const { server, chat, chatView, explain, log, statusPanel, lifecycle, editorContext } = services;
  const handlers: Record<CommandName, (...args: never[]) => unknown> = {
    startServer: () => server.start(),
    stopServer: () => server.stop(),
    restartServer: () => server.restart(),
    loadModel: () => server.load(),
    unloadModel: () => server.unload(),
    openChat: async () => {
      await chatView.reveal();
      chat.focusInput();
    },
    newChat: async () => {
      await chatView.reveal();
      chat.newChat();
    },
    explainSelection: () => explain.explainSelections(vscode.window.activeTextEditor),
    showServerLogs: () => log.show(),
    showServerStatus: () => statusPanel.show(),
    buildServingImage: () => server.buildImage(),
    cancelBuild: () => server.cancelBuild(),
    openSettings: () => SettingsService.open(),
    showActions: () => showActionsQuickPick(lifecycle),
    continueInChat: (thread: vscode.CommentThread) => explain.continueInChat(thread),
    dismissExplanation: (thread: vscode.CommentThread) => explain.dismiss(thread),
    showChatHistory: () => showChatHistory(chat, () => chatView.reveal()),
    exportChat: () => exportConversation(chat),
    addSelectionToChat: (uri?: vscode.Uri, range?: vscode.Range) => editorContext.addSelection(uri, range),
    addFileToChat: (uri?: vscode.Uri, uris?: vscode.Uri[]) => editorContext.addFile(uri, uris),
  };
  return (Object.keys(handlers) as CommandName[]).map((name) =>
    vscode.commands.registerCommand(COMMANDS[name], handlers[name] as (...args: unknown[]) => unknown));
}
