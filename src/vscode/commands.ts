// Registers every command of the extension; each one is a thin call into a service of the root.
import * as vscode from 'vscode';
import { exportConversation } from './chat/conversationExport';
import { showChatHistory } from './chat/historyPicker';
import { COMMANDS, VSCODE_COMMANDS, WALKTHROUGH_ID, type CommandName } from './commandIds';
import { SettingsService } from './config/settingsService';
import { editSelection } from './edit/editSelection';
import type { ExtensionServices } from './services';
import { showActionsQuickPick } from './statusBar';
import { noticeCommandRan } from './util/notice';

export function registerCommands(services: ExtensionServices): vscode.Disposable[] {
  const { server, setup, chat, chatView, explain, log, statusPanel, lifecycle, editorContext, reviews, settings } = services;
  const handlers: Record<CommandName, (...args: never[]) => unknown> = {
    startServer: () => server.start(),
    stopServer: () => server.stop(),
    restartServer: () => server.restart(),
    // Reload Model after "the model failed" passes { fresh: true } (src/vscode/errors/presentError.ts).
    loadModel: (options?: { fresh?: boolean }) => server.load(options?.fresh === true ? { fresh: true } : {}),
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
    stopAnswers: () => { explain.stopAll(); chat.stopAll(); },
    buildServingImage: () => setup.image.build(),
    cancelBuild: () => setup.image.cancel(),
    openSettings: () => SettingsService.open(),
    showActions: () => showActionsQuickPick(lifecycle, () => services.openai.url),
    continueInChat: (thread: vscode.CommentThread) => explain.continueInChat(thread),
    dismissExplanation: (thread: vscode.CommentThread) => explain.dismiss(thread),
    dismissAllExplanations: () => explain.dismissAll(),
    showFullExplanation: (thread: vscode.CommentThread) => explain.setBrief(thread, false),
    showExplanationBrief: (thread: vscode.CommentThread) => explain.setBrief(thread, true),
    editSelection: () => editSelection(vscode.window.activeTextEditor, {
      reviews, store: lifecycle, settings, log, client: () => server.tritonClient, modelName: () => server.modelName, track: (request) => server.track(request),
      explainFailure: (e) => server.explainFailure(e),
    }),
    // From the diff editor's title the proposal's URI comes as the argument; from a key, none.
    acceptProposal: (uri?: unknown) => reviews.accept(uri instanceof vscode.Uri ? uri : undefined),
    discardProposal: (uri?: unknown) => reviews.discard(uri instanceof vscode.Uri ? uri : undefined),
    startChatglm: () => server.startChatglm(),
    chooseWeightsFolder: () => setup.chooseWeightsFolder(),
    downloadWeights: () => setup.downloadWeights(),
    setHubToken: () => setup.weights.setToken(),
    setTeamKey: () => server.setTeamKey(),
    recheckSetup: () => setup.recheck(),
    openWalkthrough: () => vscode.commands.executeCommand(VSCODE_COMMANDS.openWalkthrough, WALKTHROUGH_ID, false),
    showChatHistory: () => showChatHistory(chat, () => chatView.reveal()),
    exportChat: () => exportConversation(chat),
    addSelectionToChat: (uri?: vscode.Uri, range?: vscode.Range) => editorContext.addSelection(uri, range),
    addFileToChat: (uri?: vscode.Uri, uris?: vscode.Uri[]) => editorContext.addFile(uri, uris),
    toggleCompletions: () => services.completions.toggle.toggle(),
    snoozeCompletions: (minutes?: unknown) => services.completions.toggle.snooze(typeof minutes === 'number' && minutes > 0 ? minutes : undefined),
    completionsMenu: () => services.completions.toggle.menu(),
  };
  return (Object.keys(handlers) as CommandName[]).map((name) =>
    vscode.commands.registerCommand(COMMANDS[name], (...args: unknown[]) => {
      noticeCommandRan(COMMANDS[name]); // a notice offering this command has done its job
      return (handlers[name] as (...a: unknown[]) => unknown)(...args);
    }));
}
