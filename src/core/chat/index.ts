// Public surface of the chat core: conversations, their attachments, their store, request building and answer
// running, the history list's grouping and the Markdown export.
export * from './messages';
export * from './conversation';
export * from './attachments';
export * from './attachmentsLayout';
export * from './attachmentsBudget';
export * from './attachmentsPending';
export * from './tokenEstimate';
export * from './requestBuilder';
export * from './continuation';
export * from './history';
export * from './markdownExport';
export * from './store';
export * from './fileStore';
export * from './conversationService';
export * from './answerRunner';
export * from './contextContent';
export * from '../composer/slashCommands';
export * from '../composer/meter';
export * from './composerBudget';
