// Chat History (the view title's clock icon): a searchable quick pick of the saved conversations, grouped by day
// with Explain conversations apart (core/chat/history.ts), each with Rename, Export and Delete buttons. Delete
// offers Undo in a notification. Picking one shows it in the chat view. The search covers the titles and the
// messages: a chat whose text holds the query shows the words around it as its detail (which the quick pick matches).
import * as vscode from 'vscode';
import { groupHistory, messageSnippet, relativeAge, type ConversationSummary, type HistoryGroupKey } from '../../core/chat';
import type { ChatController } from './chatController';
import { exportConversation } from './conversationExport';

interface ConversationItem extends vscode.QuickPickItem {
  conversation?: ConversationSummary;
}

export async function showChatHistory(chat: ChatController, revealChat: () => Promise<void>): Promise<void> {
  const picker = vscode.window.createQuickPick<ConversationItem>();
  const buttons = {
    rename: { iconPath: new vscode.ThemeIcon('edit'), tooltip: vscode.l10n.t('Rename') },
    export: { iconPath: new vscode.ThemeIcon('export'), tooltip: vscode.l10n.t('Export as Markdown') },
    delete: { iconPath: new vscode.ThemeIcon('trash'), tooltip: vscode.l10n.t('Delete') },
  };
  const groupLabels: Record<HistoryGroupKey, string> = {
    today: vscode.l10n.t('Today'),
    yesterday: vscode.l10n.t('Yesterday'),
    older: vscode.l10n.t('Older'),
    explain: vscode.l10n.t('Explanations'),
  };
  const ages = new Intl.RelativeTimeFormat(vscode.env.language, { numeric: 'auto' });
  picker.title = vscode.l10n.t('Chat History');
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  let keepOpen = false; // hidden for a moment by the rename box, not closed
  let firstFill = true;

  const fill = () => {
    const now = Date.now();
    const query = picker.value;
    const items: ConversationItem[] = [];
    for (const group of groupHistory(chat.list(), now)) {
      items.push({ label: groupLabels[group.key], kind: vscode.QuickPickItemKind.Separator });
      for (const c of group.conversations) {
        const { value, unit } = relativeAge(c.updatedAt, now);
        // Only where the title does not hold the query already: the detail says why a chat matched.
        const titled = c.title.toLocaleLowerCase().includes(query.trim().toLocaleLowerCase());
        const snippet = titled ? undefined : messageSnippet(chat.conversation(c.id)?.messages ?? [], query);
        items.push({
          label: c.title || vscode.l10n.t('New conversation'), description: ages.format(value, unit), ...(snippet ? { detail: snippet } : {}),
          conversation: c, buttons: [buttons.rename, buttons.export, buttons.delete],
        });
      }
    }
    picker.items = items;
    picker.placeholder = items.length ? vscode.l10n.t('Search chats by title or text') : vscode.l10n.t('No saved chats yet.');
    // Opened on the conversation being shown; later refreshes leave the user's place alone.
    if (firstFill) {
      const current = items.find((i) => i.conversation?.id === chat.activeConversationId);
      if (current) picker.activeItems = [current];
      firstFill = false;
    }
  };

  const subscriptions: vscode.Disposable[] = [
    chat.onDidChangeHistory(fill),
    picker.onDidChangeValue(fill),
    picker.onDidAccept(() => {
      const picked = picker.selectedItems[0]?.conversation;
      if (!picked) return;
      picker.hide();
      chat.select(picked.id);
      void revealChat();
    }),
    picker.onDidTriggerItemButton(async ({ button, item }) => {
      const c = item.conversation;
      if (!c) return;
      if (button === buttons.rename) {
        keepOpen = true;
        askTitle(c.title, async (title) => {
          await chat.rename(c.id, title);
          keepOpen = false;
          picker.show(); // takes the box's place: the quick input never closes in between
        }, () => {
          keepOpen = false;
          close();
        });
      } else if (button === buttons.export) {
        picker.hide();
        await exportConversation(chat, c.id);
      } else if (button === buttons.delete) {
        const wasShown = chat.activeConversationId === c.id;
        const removed = await chat.delete(c.id);
        if (!removed) return;
        const undo = vscode.l10n.t('Undo');
        const answer = await vscode.window.showInformationMessage(vscode.l10n.t('Deleted "{0}".', item.label), undo);
        if (answer !== undo) return;
        await chat.restore(removed);
        if (wasShown) chat.select(c.id);
      }
    }),
    picker.onDidHide(() => {
      if (!keepOpen) close();
    }),
  ];
  function close(): void {
    for (const d of subscriptions) d.dispose();
    picker.dispose();
  }
  fill();
  picker.show();
}

/**
 * The rename box, in the history list's place. On Enter `renamed` gets the new title and shows the list again while
 * the box is still up: VS Code swaps one for the other. Were the box closed first, VS Code would give the editor the
 * focus, and the list shown a moment later would close again on losing it. Escape cancels the whole history.
 */
function askTitle(current: string, renamed: (title: string) => Promise<void>, cancelled: () => void): void {
  const box = vscode.window.createInputBox();
  box.title = vscode.l10n.t('Rename Chat');
  box.prompt = vscode.l10n.t('The new name of the chat');
  box.value = current;
  let accepted = false;
  const subscriptions = [
    box.onDidChangeValue((v) => { box.validationMessage = v.trim() ? undefined : vscode.l10n.t('The name cannot be empty.'); }),
    box.onDidAccept(() => {
      if (accepted || !box.value.trim()) return;
      accepted = true;
      box.enabled = false;
      renamed(box.value).catch(() => { accepted = false; box.hide(); }); // not saved: the history closes
    }),
    box.onDidHide(() => {
      for (const d of subscriptions) d.dispose();
      box.dispose();
      if (!accepted) cancelled();
    }),
  ];
  box.show();
}
