// Inline code completion (fill-in-the-middle): the policy, with no editor in it (src/vscode/completion adapts it).
export * from './availability';
export * from './cache';
export * from './completionService';
export * from './context';
export * from './infillClient';
export * from './mode';
export * from './model';
export * from './postProcess';
export * from './references';
export * from './requestGate';
export * from './settings';
export * from './cursorSpec';
export * from './languageTag';
