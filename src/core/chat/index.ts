// Public surface of the chat core: conversations, their attachments, their store, request building and answer running.
export * from './messages';
export * from './conversation';
export * from './attachments';
export * from './attachmentsLayout';
export * from './attachmentsBudget';
export * from './attachmentsPending';
export * from './tokenEstimate';
export * from './requestBuilder';
export * from './store';
export * from './fileStore';
export * from './conversationService';
export * from './answerRunner';
