// The webview protocols (the chat panel's and the Server Status view's), imported by the extension host and the
// webview bundles; VS Code-free and browser-safe (lint-enforced: it imports nothing of ours outside src/protocol).
export * from './limits';
export * from './messages';
export * from './statusMessages';
export * from './strings';
export * from './validation';
