// Every string the chat panel shows, with its English default. The webview cannot call @vscode/l10n, so the host
// sends `{type: 'l10n', strings}` with each value passed through l10n.t(DEFAULT_STRINGS[key]) (placeholders {0}, {1}
// kept); until then, or for a missing key, the webview uses these defaults. {0} in a text that names the model is
// the state's modelName (the served model's display name, else the chosen one's).
export const DEFAULT_STRINGS = {
  panelLabel: 'ChatGLM chat',
  // The composer
  send: 'Send',
  sendTooltip: 'Send (Enter)',
  sendNotReadyTooltip: 'Send (Enter) once {0} is ready',
  stop: 'Stop',
  stopTooltip: 'Stop (Escape)',
  inputLabel: 'Message to {0}',
  inputPlaceholder: 'Ask {0} (# for context, / for commands)',
  // The messages and their toolbar (an answer's role label is the name of the model that wrote it)
  roleUser: 'You',
  messagesLabel: 'Messages',
  messageActions: 'Message actions',
  copyMessage: 'Copy',
  copiedMessage: 'Copied',
  regenerate: 'Regenerate',
  edit: 'Edit',
  editCancel: 'Cancel',
  editCancelTooltip: 'Cancel (Escape)',
  editHint: 'Sending replaces this question and everything after it.',
  continueAnswer: 'Continue',
  // The empty state
  emptyTagline: 'Runs on your own GPU with NVIDIA Triton. Answers can be wrong, so check them.',
  examplesLabel: 'Try asking',
  example1: 'Explain what a Python decorator is, with a short example.',
  example2: 'Write a Bash one-liner that counts the lines of all .py files in this folder.',
  example3: 'Translate into Chinese: "Retry the request after a short delay."',
  waysLabel: 'More ways to ask',
  hintContext: 'Type {0} to attach context: a file, the selection, problems, changes or a symbol.',
  hintCommands: 'Type {0} at the start for a command: /explain, /fix, /tests, /doc, /new.',
  hintExplain: 'In the editor, select code and press {0} to explain it (Explain Selection).',
  hintExplainNoKey: 'In the editor, select code and run Explain Selection from its context menu.',
  hintEdit: 'Select code and press {0} to have it rewritten as you describe (Edit Selection).',
  hintEditNoKey: 'Select code and run Edit Selection from the context menu to have it rewritten as you describe.',
  keysLabel: 'Keyboard',
  keySend: '{0} to send',
  keyNewLine: '{0} for a new line',
  keyRecall: '{0} for your last question',
  keyStop: '{0} to stop an answer',
  keyNewChat: '{0} for a new chat',
  // Inside answers: code blocks, markers and notes
  copy: 'Copy',
  copied: 'Copied',
  insert: 'Insert at Cursor',
  openInEditor: 'Open in Editor',
  applyToSelection: 'Apply to Selection',
  // The words on a code block's buttons (the full names above are their tooltips).
  insertShort: 'Insert',
  openShort: 'Open',
  applyShort: 'Apply',
  wrapShort: 'Wrap',
  wrapLines: 'Wrap long lines in code blocks',
  codeToolbar: 'Code block actions',
  codeBlock: 'Code block ({0})',
  codeBlockPlain: 'Code block',
  generating: 'Generating…',
  statusStopped: 'Stopped — partial answer',
  statusFailed: 'Failed — partial answer: {0}',
  statusInterrupted: 'Interrupted — partial answer (VS Code closed while answering)',
  finishLength: 'The answer reached the maximum length.',
  historyTrimmed: '{0} earlier messages were left out to fit the model\'s context.',
  tokens: '{0} prompt tokens, {1} answer tokens',
  answeredBy: 'Answered by {0}',
  imageRemoved: '[image not loaded: {0}]',
  invisibleCharacter: 'Invisible character {0}: {1}',
  /** A link's tooltip: the real URL, then this line with the title the answer gave it. */
  linkTitleFromAnswer: 'Title from the answer: {0}',
  /** An answer's link that is shown but does not open, and why. */
  linkInactiveTooLong: 'This link does not open: it is longer than {0} characters.',
  linkInactiveRefused: 'This link does not open: only well-formed http, https and mailto addresses do.',
  /** A link of the part of the answer still streaming. */
  linkPending: 'The link opens once this part of the answer is complete.',
  /** A link of a very long answer's last block that could not be checked as part of the whole block. */
  linkUnchecked: 'This link does not open: this very long answer is not rendered again as a whole, so the link could not be checked.',
  'server.unknown': 'Checking the Triton server…',
  'server.stopped': 'The Triton server is not running.',
  'server.starting': 'The Triton server is starting…',
  'server.running': 'The Triton server is running.',
  'server.failed': 'The Triton server failed.',
  'model.unknown': 'Model state unknown.',
  'model.unloaded': '{0} is not loaded.',
  'model.loading': 'Loading {0}…',
  'model.ready': '{0} is ready.',
  'model.failed': '{0} failed to load.',
  'model.faulted': '{0} stopped after a GPU fault.',
  startServer: 'Start Server',
  loadModel: 'Load Model',
  reloadModel: 'Reload Model',
  openSettings: 'Open Settings',
  notReady: 'The model is not ready, so questions cannot be sent yet.',
  dismiss: 'Dismiss',
  retry: 'Retry',
  // guided setup (setupChecklist.ts)
  setupTitle: 'Set up {0}',
  // The same box once nothing is missing (after Stop or Unload too): it says what state the model is in, not "set up".
  setupTitleStopped: '{0} is stopped',
  setupTitleUnloaded: '{0} is not loaded',
  setupTitleBusy: 'ChatGLM server',
  setupLabel: 'ChatGLM setup checklist',
  startChatglm: 'Start ChatGLM',
  setupRecheck: 'Re-check',
  setupChecking: 'Checking…',
  setupPassed: '{0} of {1} checks passed',
  setupModels: 'Model',
  setupModelChosen: 'Chosen',
  setupModelSummary: 'Model: {0} (compare {1} models, choose another)',
  setupModelChoose: 'Choose',
  setupModelLicense: 'Licence',
  'setupLevel.ok': 'Passed',
  'setupLevel.warning': 'Warning',
  'setupLevel.error': 'Needs attention',
  'setupLevel.blocked': 'Not checked yet',
  'setupLevel.unknown': 'Unknown',
  'setupLevel.skipped': 'Skipped',
  'setupLevel.pending': 'In progress',
  'setupFix.downloadWeights': 'Download Weights',
  'setupFix.cancelDownload': 'Cancel Download',
  'setupFix.chooseWeights': 'Choose Weights Folder…',
  'setupFix.buildImage': 'Build Serving Image',
  'setupFix.cancelBuild': 'Cancel Build',
  'setupFix.installDocker': 'Install Docker…',
  'setupFix.startDocker': 'How to Start Docker…',
  'setupFix.dockerPermissions': 'Fix Docker Permissions…',
  'setupFix.installNvidiaToolkit': 'Install the NVIDIA Container Toolkit…',
  'setupFix.openSettings': 'Open Settings',
  'setupFix.showLogs': 'Show Server Logs',
  // attachments (editor context in chat)
  attachments: 'Attachments',
  attachedContext: 'Attached to this question',
  addFile: 'Add File…',
  addFileTooltip: 'Attach a file from the workspace',
  removeAttachment: 'Remove {0}',
  openAttachment: 'Open {0}',
  attachmentLine: 'line {0}',
  attachmentLines: 'lines {0}–{1}',
  attachmentTokens: 'about {0} tokens',
  /** On a chip, after its name: "geometry.py:3-4 · 56 tokens". */
  chipTokens: '{0} tokens',
  chipTokensOne: '1 token',
  activeFileTag: 'current file',
  activeFileOn: 'The current file goes with the question. Click to leave it out.',
  activeFileOff: 'The current file is left out. Click to attach it.',
  activeFileUntrusted: 'Untrusted workspace: the current file is attached only when you switch it on.',
  activeFileSuggested: 'current file — click to attach',
  activeFileSuggestedHint: 'Click to attach the current file to the question.',
  'chipKind.problems': 'problems',
  'chipKind.changes': 'changes',
  'chipKind.symbol': 'symbol',
  changesChip: 'Changes',
  // `#` context and `/` commands (contextCompletion.ts)
  completionLabel: 'Suggestions',
  completionCount: '{0} suggestions. Up and Down to choose, Enter or Tab to accept, Escape to close.',
  completionNone: 'No suggestions.',
  'context.file': 'A file of the workspace',
  'context.selection': 'The editor\'s selection',
  'context.problems': 'The current file\'s problems, with their lines',
  'context.changes': 'The working tree\'s changes against HEAD',
  'context.symbol': 'A function, class or other symbol of the workspace',
  'command.explain': 'Explain the attached code',
  'command.fix': 'Fix the current file\'s problems',
  'command.tests': 'Write unit tests for the attached code',
  'command.doc': 'Write documentation comments for the attached code',
  'command.new': 'Start a new chat',
  // the token meter under the input (tokenMeter.ts)
  meterName: 'Tokens of the next question',
  meterText: '{0} / {1} tokens',
  meterLabel: 'About {0} of {1} tokens',
  meterDetail: 'System prompt: {0}\nHistory kept: {1} (turns: {2})\nAttachments: {3}\nQuestion: {4}\nThe model accepts {5}.',
  meterWarning: 'Close to the model\'s input budget.',
  meterOver: 'Over the model\'s input budget: Send asks what to leave out.',
} as const;

export type StringKey = keyof typeof DEFAULT_STRINGS;
export type Strings = Record<StringKey, string>;

/** Replaces {0}, {1}... like l10n.t does. */
export function format(template: string, ...args: Array<string | number>): string {
  return template.replace(/\{(\d+)\}/g, (m, i: string) => (Number(i) < args.length ? String(args[Number(i)]) : m));
}

/** Defaults overlaid with the host's translations (only known keys, only strings). */
export function mergeStrings(received: Record<string, string> | undefined): Strings {
  const out: Strings = { ...DEFAULT_STRINGS };
  if (!received) return out;
  for (const key of Object.keys(DEFAULT_STRINGS) as StringKey[]) {
    const v = Object.prototype.hasOwnProperty.call(received, key) ? received[key] : undefined;
    if (typeof v === 'string' && v !== '') out[key] = v;
  }
  return out;
}
