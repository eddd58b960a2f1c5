// Every string the chat panel shows, with its English default. The webview cannot call @vscode/l10n, so the host
// sends `{type: 'l10n', strings}` with each value passed through l10n.t(DEFAULT_STRINGS[key]) (placeholders {0}, {1}
// kept); until then, or for a missing key, the webview uses these defaults.
export const DEFAULT_STRINGS = {
  panelLabel: 'ChatGLM3 chat',
  newChat: 'New Chat',
  send: 'Send',
  stop: 'Stop',
  regenerate: 'Regenerate',
  editLast: 'Edit',
  editSend: 'Send Edited',
  editCancel: 'Cancel',
  inputLabel: 'Message to ChatGLM3',
  inputPlaceholder: 'Ask ChatGLM3… (Enter to send, Shift+Enter for a new line, Escape to stop)',
  conversations: 'Conversations',
  showConversations: 'Show conversations',
  hideConversations: 'Hide conversations',
  noConversations: 'No saved conversations yet.',
  untitled: 'New conversation',
  deleteConversation: 'Delete conversation "{0}"',
  emptyChat: 'Ask a question to start a conversation.',
  roleUser: 'You',
  roleAssistant: 'ChatGLM3',
  messagesLabel: 'Messages',
  copy: 'Copy',
  copied: 'Copied',
  insert: 'Insert at Cursor',
  openInEditor: 'Open in Editor',
  codeBlock: 'Code block ({0})',
  codeBlockPlain: 'Code block',
  generating: 'Generating…',
  statusStopped: 'Stopped — partial answer',
  statusFailed: 'Failed — partial answer: {0}',
  statusInterrupted: 'Interrupted — partial answer (VS Code closed while answering)',
  finishLength: 'The answer reached the maximum length.',
  historyTrimmed: '{0} earlier messages were left out to fit the model\'s context.',
  tokens: '{0} prompt tokens, {1} answer tokens',
  imageRemoved: '[image not loaded: {0}]',
  'server.unknown': 'Checking the Triton server…',
  'server.stopped': 'The Triton server is not running.',
  'server.starting': 'The Triton server is starting…',
  'server.running': 'The Triton server is running.',
  'server.failed': 'The Triton server failed.',
  'model.unknown': 'Model state unknown.',
  'model.unloaded': 'ChatGLM3 is not loaded.',
  'model.loading': 'Loading ChatGLM3…',
  'model.ready': 'ChatGLM3 is ready.',
  'model.failed': 'ChatGLM3 failed to load.',
  startServer: 'Start Server',
  loadModel: 'Load Model',
  openSettings: 'Open Settings',
  notReady: 'The model is not ready, so questions cannot be sent yet.',
  dismiss: 'Dismiss',
  retry: 'Retry',
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
