// The status bar item: server and model state with codicons, "generating (n)" while this window's answers run;
// a click offers the actions valid now.
import * as vscode from 'vscode';
import { modelTitle } from '../core/models/choice';
import type { LifecycleAction } from '../core/state/actions';
import { actionMenu, type MenuCommand, type MenuGroupName } from '../core/state/actionMenu';
import { MODEL_FAILED_CODE, type LifecycleState, type ModelState, type ServerState } from '../core/state/lifecycle';
import type { ActivityBoard, ActivitySnapshot } from '../core/status/activity';
import { COMMANDS, type CommandId } from './commandIds';
import { failureText } from './server/setupView';
import type { LifecycleStore } from './state/lifecycleStore';
import { plural } from './util/plural';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[];

  /** `modelName`: Triton's name of the served model (the server session's), named in the tooltip. */
  constructor(store: LifecycleStore, private readonly activity: ActivityBoard, private readonly modelName: () => string) {
    this.item = vscode.window.createStatusBarItem('tritonChatglm.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = vscode.l10n.t('ChatGLM Server');
    this.item.command = COMMANDS.showActions;
    const stopWatching = activity.onDidChange(() => this.render(store.current));
    this.subscriptions = [store.onDidChange((s) => this.render(s)), { dispose: stopWatching }];
    this.render(store.current);
    this.item.show();
  }

  private render(s: LifecycleState): void {
    const activity = this.activity.snapshot;
    const busy = generating(s, activity);
    const { icon, text } = busy ?? summary(s);
    this.item.text = `${icon} ${text}`;
    const tip = new vscode.MarkdownString(undefined, true);
    tip.isTrusted = false;
    tip.appendMarkdown(`**${vscode.l10n.t('ChatGLM3 on Triton')}** (${s.mode === 'managed' ? vscode.l10n.t('managed container') : vscode.l10n.t('external server')})\n\n`);
    tip.appendMarkdown(`${vscode.l10n.t('Server')}: ${serverText(s.server)}  \n${vscode.l10n.t('Model')}: `);
    tip.appendText(`${modelTitle(this.modelName())}, ${modelText(s.model)}`);
    appendActivity(tip, activity);
    const err = s.serverError ?? s.modelError;
    if (err) {
      tip.appendMarkdown('\n\n');
      tip.appendText(failureText(err));
    }
    tip.appendMarkdown(`\n\n${s.server === 'setup' ? vscode.l10n.t('Click for the setup checklist and actions.') : vscode.l10n.t('Click for actions.')}`);
    this.item.tooltip = tip;
    // "Setup needed" is a to-do, not a failure: the warning colour, never the error one.
    this.item.backgroundColor = s.server === 'error' || s.model === 'failed'
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : s.server === 'setup' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.accessibilityInformation = { label: busy ? busy.text : `ChatGLM: ${serverText(s.server)}, ${modelTitle(this.modelName())} ${modelText(s.model)}` };
  }

  dispose(): void {
    for (const d of this.subscriptions) d.dispose();
    this.item.dispose();
  }
}

/** While answers run (the model is ready): "generating (n)" with a spinner instead of "ready". */
function generating(s: LifecycleState, activity: ActivitySnapshot): { icon: string; text: string } | undefined {
  const n = activity.answers.length;
  if (n === 0 || s.server !== 'running' || s.model !== 'ready') return undefined;
  return { icon: '$(loading~spin)', text: vscode.l10n.t('ChatGLM: generating ({0})', n) };
}

/** The tooltip's list of what runs: each answer by its conversation's title, and the explanations still queued. */
function appendActivity(tip: vscode.MarkdownString, activity: ActivitySnapshot): void {
  const { answers, queuedExplanations } = activity;
  if (answers.length === 0 && queuedExplanations === 0) return;
  tip.appendMarkdown('\n\n');
  if (answers.length > 0) {
    tip.appendMarkdown(`${plural(answers.length, vscode.l10n.t('Generating 1 answer:'), vscode.l10n.t('Generating {0} answers:', answers.length))}\n`);
    for (const { title } of answers.slice(0, MAX_LISTED)) {
      tip.appendMarkdown('\n- ');
      tip.appendText(title || vscode.l10n.t('New conversation'));
    }
    if (answers.length > MAX_LISTED) tip.appendMarkdown(`\n- ${vscode.l10n.t('and {0} more', answers.length - MAX_LISTED)}`);
    tip.appendMarkdown('\n\n');
  }
  if (queuedExplanations > 0) {
    tip.appendMarkdown(plural(queuedExplanations,
      vscode.l10n.t('1 explanation queued in this window.'),
      vscode.l10n.t('{0} explanations queued in this window.', queuedExplanations)));
  }
}

/** Answers listed by name in the tooltip; the rest are counted. */
const MAX_LISTED = 8;

function summary(s: LifecycleState): { icon: string; text: string } {
  if (s.server === 'error') return { icon: '$(error)', text: vscode.l10n.t('ChatGLM: server error') };
  if (s.server === 'setup') return { icon: '$(tools)', text: vscode.l10n.t('ChatGLM: setup needed') };
  if (s.server === 'starting') return { icon: '$(loading~spin)', text: vscode.l10n.t('ChatGLM: starting') };
  if (s.server === 'stopping') return { icon: '$(loading~spin)', text: vscode.l10n.t('ChatGLM: stopping') };
  if (s.server === 'stopped') return { icon: '$(circle-slash)', text: vscode.l10n.t('ChatGLM: stopped') };
  switch (s.model) {
    case 'ready': return { icon: '$(check)', text: vscode.l10n.t('ChatGLM: ready') };
    case 'loading': return { icon: '$(loading~spin)', text: vscode.l10n.t('ChatGLM: loading') };
    case 'unloading': return { icon: '$(loading~spin)', text: vscode.l10n.t('ChatGLM: unloading') };
    case 'failed': return { icon: '$(warning)', text: vscode.l10n.t('ChatGLM: load failed') };
    case 'unloaded': return { icon: '$(server-process)', text: vscode.l10n.t('ChatGLM: not loaded') };
  }
}

export function serverText(s: ServerState): string {
  switch (s) {
    case 'stopped': return vscode.l10n.t('stopped');
    case 'setup': return vscode.l10n.t('setup needed');
    case 'starting': return vscode.l10n.t('starting');
    case 'running': return vscode.l10n.t('running');
    case 'stopping': return vscode.l10n.t('stopping');
    case 'error': return vscode.l10n.t('error');
  }
}

export function modelText(m: ModelState): string {
  switch (m) {
    case 'unloaded': return vscode.l10n.t('unloaded');
    case 'loading': return vscode.l10n.t('loading');
    case 'ready': return vscode.l10n.t('ready');
    case 'unloading': return vscode.l10n.t('unloading');
    case 'failed': return vscode.l10n.t('failed');
  }
}

interface ActionItem extends vscode.QuickPickItem {
  command: CommandId;
}

const ACTION_COMMANDS: Record<LifecycleAction, CommandId> = {
  startChatglm: COMMANDS.startChatglm,
  recheckSetup: COMMANDS.recheckSetup,
  start: COMMANDS.startServer,
  stop: COMMANDS.stopServer,
  restart: COMMANDS.restartServer,
  load: COMMANDS.loadModel,
  unload: COMMANDS.unloadModel,
  buildImage: COMMANDS.buildServingImage,
  showStatus: COMMANDS.showServerStatus,
  explain: COMMANDS.explainSelection,
};

function actionItem(action: LifecycleAction, s: LifecycleState): ActionItem | undefined {
  const command = ACTION_COMMANDS[action];
  switch (action) {
    case 'startChatglm': return { command, label: `$(rocket) ${vscode.l10n.t('Start ChatGLM')}`, description: vscode.l10n.t('start the server and load the model') };
    case 'recheckSetup': return { command, label: `$(refresh) ${vscode.l10n.t('Re-check Setup')}` };
    case 'start': return { command, label: `$(play) ${vscode.l10n.t('Start Server')}` };
    case 'stop': return { command, label: `$(debug-stop) ${vscode.l10n.t('Stop Server')}` };
    case 'restart': return { command, label: `$(debug-restart) ${vscode.l10n.t('Restart Server')}` };
    case 'load': return { command, label: `$(cloud-download) ${s.model === 'ready' || s.modelError?.code === MODEL_FAILED_CODE ? vscode.l10n.t('Reload Model') : vscode.l10n.t('Load Model')}` };
    case 'unload': return { command, label: `$(cloud-upload) ${s.model === 'loading' ? vscode.l10n.t('Cancel Loading') : vscode.l10n.t('Unload Model')}` };
    case 'buildImage': return { command, label: `$(package) ${vscode.l10n.t('Build Serving Image')}` };
    case 'showStatus': return { command, label: `$(pulse) ${vscode.l10n.t('Show Server Status')}` };
    case 'explain': return undefined; // needs an editor selection; it lives in the editor's context menu
  }
}

const MENU_COMMANDS: Record<MenuCommand, () => ActionItem> = {
  openChat: () => ({ command: COMMANDS.openChat, label: `$(comment-discussion) ${vscode.l10n.t('Open Chat')}` }),
  showSetupChecklist: () => ({ command: COMMANDS.openChat, label: `$(checklist) ${vscode.l10n.t('Show Setup Checklist')}` }),
  showLogs: () => ({ command: COMMANDS.showServerLogs, label: `$(output) ${vscode.l10n.t('Show Server Logs')}` }),
  chooseWeightsFolder: () => ({ command: COMMANDS.chooseWeightsFolder, label: `$(folder-opened) ${vscode.l10n.t('Choose Weights Folder…')}` }),
  openWalkthrough: () => ({ command: COMMANDS.openWalkthrough, label: `$(book) ${vscode.l10n.t('Get Started with ChatGLM')}` }),
  openSettings: () => ({ command: COMMANDS.openSettings, label: `$(gear) ${vscode.l10n.t('Open Settings')}` }),
};

/** The separator above each group but the first: what its entries are about. */
function groupLabel(group: Exclude<MenuGroupName, 'next'>): string {
  switch (group) {
    case 'setup': return vscode.l10n.t('Setup');
    case 'help': return vscode.l10n.t('Logs and settings');
    case 'model': return vscode.l10n.t('Model');
    case 'server': return vscode.l10n.t('Server');
  }
}

/**
 * The quick pick behind the status bar item: only what is valid now, in the groups of src/core/state/actionMenu.ts
 * (what is likely next first; Reload and Unload under Model, Restart and Stop under Server, last).
 */
export async function showActionsQuickPick(store: LifecycleStore, openAiUrl: () => string | undefined = () => undefined): Promise<void> {
  const s = store.current;
  const url = openAiUrl();
  // The OpenAI endpoint's URL while it listens: picking it copies it (for Continue's apiBase and the like).
  const endpoint: (vscode.QuickPickItem & { url: string })[] = url
    ? [{ url, label: `$(plug) ${vscode.l10n.t('OpenAI-compatible endpoint')}`, description: url, detail: vscode.l10n.t('Copy the URL') }]
    : [];
  const items: (ActionItem | vscode.QuickPickItem)[] = [...endpoint, ...actionMenu(s, store.actionContext).flatMap(({ group, entries }) => {
    const rows = entries.flatMap((entry): ActionItem[] => {
      if (entry.kind === 'command') return [MENU_COMMANDS[entry.command]()];
      const item = actionItem(entry.action, s);
      return item ? [item] : [];
    });
    const separator: vscode.QuickPickItem[] = group === 'next' ? [] : [{ label: groupLabel(group), kind: vscode.QuickPickItemKind.Separator }];
    return rows.length > 0 ? [...separator, ...rows] : [];
  })];
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('ChatGLM: server {0}, model {1}', serverText(s.server), modelText(s.model)),
    placeHolder: vscode.l10n.t('Choose an action'),
  });
  if (picked && 'url' in picked && typeof picked.url === 'string') {
    await vscode.env.clipboard.writeText(picked.url);
    void vscode.window.showInformationMessage(vscode.l10n.t('Copied {0}', picked.url));
  } else if (picked && 'command' in picked) await vscode.commands.executeCommand(picked.command as string);
}
