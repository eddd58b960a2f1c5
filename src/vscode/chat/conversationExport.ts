// Export Chat as Markdown: the conversation (core/chat/markdownExport.ts) written where the user picks in a save
// dialog, by default next to the workspace's files and named after its title.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { conversationToMarkdown, exportFileName, type MarkdownExportLabels } from '../../core/chat';
import { modelDisplayName } from '../../core/models/choice';
import type { ChatController } from './chatController';

/** Exports `conversationId`, or the conversation the chat view shows. */
export async function exportConversation(chat: ChatController, conversationId?: string): Promise<void> {
  const id = conversationId ?? chat.activeConversationId;
  const conversation = id ? chat.conversation(id) : undefined;
  if (!conversation || conversation.messages.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('There is no chat to export yet.'));
    return;
  }
  const name = exportFileName(conversation.title, vscode.l10n.t('chat'));
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri ?? vscode.Uri.file(os.homedir());
  const target = await vscode.window.showSaveDialog({
    title: vscode.l10n.t('Export Chat as Markdown'),
    defaultUri: vscode.Uri.joinPath(folder, name),
    filters: { [vscode.l10n.t('Markdown')]: ['md'] },
    saveLabel: vscode.l10n.t('Export'),
  });
  if (!target) return;
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(conversationToMarkdown(conversation, exportLabels(chat.modelName))));
  const open = vscode.l10n.t('Open');
  const picked = await vscode.window.showInformationMessage(vscode.l10n.t('Exported the chat to {0}.', target.fsPath), open);
  if (picked === open) await vscode.window.showTextDocument(target);
}

/** `served`: Triton's name of the model the server serves now, for answers that do not name theirs. */
function exportLabels(served: string): MarkdownExportLabels {
  return {
    untitled: vscode.l10n.t('New conversation'),
    user: vscode.l10n.t('You'),
    assistant: (model) => modelDisplayName(model ?? served),
    safetyNote: vscode.l10n.t('Exported from the ChatGLM chat. Raw HTML in the messages is shown as text and images as links, so nothing in this file runs or loads by itself.'),
    statusNote: (status, error) => {
      switch (status) {
        case 'stopped': return vscode.l10n.t('Stopped — partial answer');
        case 'failed': return vscode.l10n.t('Failed — partial answer: {0}', error);
        case 'interrupted': return vscode.l10n.t('Interrupted — partial answer (VS Code closed while answering)');
        case 'streaming': return vscode.l10n.t('Generating…');
      }
    },
  };
}
