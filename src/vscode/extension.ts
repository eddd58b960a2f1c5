// Extension entry (esbuild → dist/extension.js).
//
// Activation: commands and the chat view activate the extension on their own (VS Code ≥ 1.74 derives those
// events from `contributes`). `onStartupFinished` is declared as well because the status bar must show the
// state of a container that survived a window reload; it runs after the window is up, and activation only
// reads settings and conversations and asks docker about the container in the background.
import type * as vscode from 'vscode';
import { ExtensionServices } from './services';

let services: ExtensionServices | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  services = await ExtensionServices.create(context);
}

/** Returning the promise lets VS Code wait for the conversations to be flushed. */
export async function deactivate(): Promise<void> {
  const s = services;
  services = undefined;
  await s?.dispose();
}
