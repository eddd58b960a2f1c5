// Public surface of the language model provider's policy (VS Code's Chat view and `vscode.lm`).
export * from './chatModel';
export * from './messageMapping';
