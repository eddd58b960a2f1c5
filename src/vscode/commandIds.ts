// Every command id the extension registers or runs, spelled once. The extension's own ids must match
// package.json's contributes.commands (a unit test compares them, and finds none spelled elsewhere in src/).

export const COMMANDS = {
  startServer: 'tritonChatglm.startServer',
  stopServer: 'tritonChatglm.stopServer',
  restartServer: 'tritonChatglm.restartServer',
  loadModel: 'tritonChatglm.loadModel',
  unloadModel: 'tritonChatglm.unloadModel',
  openChat: 'tritonChatglm.openChat',
  newChat: 'tritonChatglm.newChat',
  explainSelection: 'tritonChatglm.explainSelection',
  showServerLogs: 'tritonChatglm.showServerLogs',
  showServerStatus: 'tritonChatglm.showServerStatus',
  /** Stops every answer and explanation this window is generating (Server Status's title bar). */
  stopAnswers: 'tritonChatglm.stopAnswers',
  buildServingImage: 'tritonChatglm.buildServingImage',
  cancelBuild: 'tritonChatglm.cancelBuild',
  openSettings: 'tritonChatglm.openSettings',
  showActions: 'tritonChatglm.showActions',
  continueInChat: 'tritonChatglm.continueInChat',
  dismissExplanation: 'tritonChatglm.dismissExplanation',
  dismissAllExplanations: 'tritonChatglm.dismissAllExplanations',
  showFullExplanation: 'tritonChatglm.showFullExplanation',
  showExplanationBrief: 'tritonChatglm.showExplanationBrief',
  // Edit Selection and the review of a proposed change (Apply to Selection's too)
  editSelection: 'tritonChatglm.editSelection',
  acceptProposal: 'tritonChatglm.acceptProposal',
  discardProposal: 'tritonChatglm.discardProposal',
  // guided setup
  startChatglm: 'tritonChatglm.startChatglm',
  chooseWeightsFolder: 'tritonChatglm.chooseWeightsFolder',
  downloadWeights: 'tritonChatglm.downloadWeights',
  setHubToken: 'tritonChatglm.setHubToken',
  /** The key of a team server (docs/TEAM.md), kept in SecretStorage. */
  setTeamKey: 'tritonChatglm.setTeamKey',
  recheckSetup: 'tritonChatglm.recheckSetup',
  openWalkthrough: 'tritonChatglm.openWalkthrough',
  // Chat history (the chat view's title bar)
  showChatHistory: 'tritonChatglm.showChatHistory',
  exportChat: 'tritonChatglm.exportChat',
  addSelectionToChat: 'tritonChatglm.addSelectionToChat',
  addFileToChat: 'tritonChatglm.addFileToChat',
  // Code completion (the status bar's toggle)
  toggleCompletions: 'tritonChatglm.toggleCompletions',
  snoozeCompletions: 'tritonChatglm.snoozeCompletions',
  completionsMenu: 'tritonChatglm.completionsMenu',
} as const;

export type CommandName = keyof typeof COMMANDS;
export type CommandId = (typeof COMMANDS)[CommandName];

/** VS Code's own commands that the extension runs. */
export const VSCODE_COMMANDS = {
  openSettings: 'workbench.action.openSettings',
  /** The settings of the remote machine (Remote-SSH, WSL, code-server): where machine-scoped settings live there. */
  openRemoteSettings: 'workbench.action.openRemoteSettings',
  openWalkthrough: 'workbench.action.openWalkthrough',
  setContext: 'setContext',
  /** Opens a diff editor (left, right, title, options): the preview of Apply to Selection. */
  diff: 'vscode.diff',
} as const;

/** `<publisher>.<name>` of package.json. */
export const EXTENSION_ID = 'triton-chatglm.triton-chatglm';
/** `<extension id>#<id>` of the walkthrough in contributes.walkthroughs. */
export const WALKTHROUGH_ID = `${EXTENSION_ID}#gettingStarted`;
