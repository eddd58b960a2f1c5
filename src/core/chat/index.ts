// Public surface of the chat core: conversations, their store, request building and answer running.
export * from './messages';
export * from './conversation';
export * from './tokenEstimate';
export * from './requestBuilder';
export * from './store';
export * from './fileStore';
export * from './conversationService';
export * from './answerRunner';
