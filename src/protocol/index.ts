// The webview protocol, imported by the extension host and the webview bundle (no vscode, no node built-ins).
export * from './limits';
export * from './messages';
export * from './strings';
