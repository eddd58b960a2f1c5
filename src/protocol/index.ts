// The webview protocols (the chat panel's and the Server Status view's), imported by the extension host and the
// webview bundles, so it must run in a browser as well: it imports nothing of ours outside src/protocol (lint-enforced).
export * from './limits';
export * from './messages';
export * from './statusMessages';
export * from './strings';
export * from './validation';
