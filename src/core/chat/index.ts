// Public surface of the VS Code-free chat core.
export * from './messages';
export * from './conversation';
export * from './token-estimate';
export * from './request-builder';
export * from './store';
export * from './file-store';
export * from './conversation-service';
