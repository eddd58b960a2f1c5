// Public surface of the VS Code-free chat core.
export * from './messages';
export * from './conversation';
export * from './tokenEstimate';
export * from './requestBuilder';
export * from './store';
export * from './fileStore';
export * from './conversationService';
