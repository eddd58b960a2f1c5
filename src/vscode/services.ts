// The root of disposables: everything the extension creates lives here and is released in reverse order of
// creation — commands and UI first (nothing new can start), then the explain runs and the chat (answers
// aborted, conversations flushed to disk), then the server controller (its setup checklist and image build first,
// then watchers, timers, HTTP pool; the container itself keeps running so a reload re-attaches), and the log
// channel last.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ConversationService, FileConversationStore, type LoadProblem } from '../core/chat';
import { ChatController } from './chat/chatController';
import { CompletionController } from './completion/completionController';
import { CHAT_VIEW_ID, ChatViewProvider } from './chat/chatViewProvider';
import { EditorContext } from './chat/editorContext';
import { registerCommands } from './commands';
import { VSCODE_COMMANDS } from './commandIds';
import type { SettingProblem } from '../core/settings/settingsParser';
import { ActivityBoard } from '../core/status/activity';
import { SettingsService } from './config/settingsService';
import { PROPOSAL_SCHEME, ProposalDocuments, ProposalReviews } from './edit/proposalReview';
import { ExplainController } from './explain/explainController';
import { Log } from './log';
import { afterFirstCheck } from './server/firstRun';
import { ServerController } from './server/serverController';
import type { SetupController } from './server/setupController';
import { OpenAiEndpoint } from './openaiEndpoint';
import { reactToSettings } from './settingsReactions';
import { ChatModelProvider, registerChatModelProvider } from './lm/chatModelProvider';
import { LifecycleStore } from './state/lifecycleStore';
import { StatusBar } from './statusBar';
import { StatusPanel } from './status/statusPanel';
import { DisposableStore } from './util/disposables';

/** True while this window generates an answer or holds an explanation in its queue (enables Stop Answers). */
export const ANSWERING_CONTEXT = 'tritonChatglm.answering';

export class ExtensionServices implements vscode.Disposable {
  private readonly store: DisposableStore;

  private constructor(
    readonly log: Log,
    readonly settings: SettingsService,
    readonly lifecycle: LifecycleStore,
    readonly server: ServerController,
    /** The setup checklist and the image build; the server controller owns it (they share its session). */
    readonly setup: SetupController,
    readonly chat: ChatController,
    readonly chatView: ChatViewProvider,
    readonly explain: ExplainController,
    readonly statusPanel: StatusPanel,
    readonly editorContext: EditorContext,
    readonly reviews: ProposalReviews,
    /** The OpenAI-compatible endpoint of `tritonChatglm.openai.enabled`. */
    readonly openai: OpenAiEndpoint,
    /** Inline code completion: the provider and the status bar's toggle. */
    readonly completions: CompletionController,
    store: DisposableStore,
  ) {
    this.store = store;
  }

  static async create(context: vscode.ExtensionContext): Promise<ExtensionServices> {
    const activationStarted = performance.now();
    const log = new Log('ChatGLM3 on Triton');
    const store = new DisposableStore((e) => log.error('dispose failed', e));
    store.add(log);
    try {
      const settings = store.add(new SettingsService());
      const lifecycle = store.add(new LifecycleStore(settings.current.serverMode, log));
      const storage = context.globalStorageUri.fsPath;
      const server = store.add(new ServerController(settings, lifecycle, log, {
        tritonDir: path.join(context.extensionPath, 'triton'),
        repositoryDir: path.join(storage, 'model_repository'),
        secrets: context.secrets,
      }, context.globalState));

      const conversations = new ConversationService(new FileConversationStore(path.join(storage, 'conversations.json')), {
        onSaveError: (e) => log.error('Saving conversations failed', e),
      });
      const problems = await conversations.init();
      const editorContext = store.add(new EditorContext(log, settings));
      const proposals = store.add(new ProposalDocuments());
      store.add(vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, proposals));
      // Edit Selection's and Apply to Selection's diff, with Accept and Discard.
      const reviews = store.add(new ProposalReviews(proposals));
      const chat = store.add(new ChatController(conversations, server, lifecycle, settings, context.globalState, log, editorContext, reviews));
      // ChatGLM3 in VS Code's own Chat view and for extensions using vscode.lm.
      store.add(registerChatModelProvider(store.add(new ChatModelProvider(server, lifecycle, settings, log))));
      const chatView = store.add(new ChatViewProvider(context.extensionUri, chat, log));
      store.add(vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView, { webviewOptions: { retainContextWhenHidden: false } }));
      // What this window asks the server now: the status bar, the Server Status view and Explain read it.
      const activity = new ActivityBoard();
      store.add(chat.onDidChangeAnswers(() => activity.setAnswers(chat.runningAnswers())));
      // Stop Answers (Server Status's title bar) is enabled while something of this window runs or waits.
      const answering = activity.onDidChange((a) => {
        void vscode.commands.executeCommand(VSCODE_COMMANDS.setContext, ANSWERING_CONTEXT, a.answers.length + a.queuedExplanations > 0);
      });
      store.add({ dispose: answering });
      const explain = store.add(new ExplainController(chat, lifecycle, settings, log, activity, () => server.tritonClient, editorContext, () => server.modelName));
      const statusPanel = store.add(new StatusPanel(context.extensionUri, server, activity, log));
      store.add(new StatusBar(lifecycle, activity, () => server.modelName));
      store.add(reactToSettings(settings, server, lifecycle, log));
      const openai = store.add(new OpenAiEndpoint(settings, () => server.tritonClient, () => server.modelName, log));
      const completions = store.add(new CompletionController({
        settings, lifecycle, log, client: () => server.tritonClient, modelName: () => server.modelName, track: (request) => server.track(request),
      }));

      const services = new ExtensionServices(log, settings, lifecycle, server, server.setup, chat, chatView, explain, statusPanel, editorContext, reviews, openai, completions, store);
      for (const d of registerCommands(services)) store.add(d);
      // Read by the end-to-end suite for the benchmark's activation_ms.
      log.info(`activation: commands registered in ${(performance.now() - activationStarted).toFixed(1)} ms`);

      reportLoadProblems(problems, log);
      reportSettingsProblems(settings.problems, log);
      // Re-attach (or check the setup, and auto-start when asked) in the background: activation stays cheap, the
      // status bar and the setup checklist fill in when docker answers. On an install's first activation that finds
      // the setup needed, the ChatGLM view (its checklist) is revealed once.
      void server.activate()
        .then(() => afterFirstCheck(context.globalState, lifecycle, () => chatView.reveal(), log))
        .catch((e: unknown) => log.error('first run', e));
      return services;
    } catch (e) {
      await store.dispose();
      throw e;
    }
  }

  dispose(): Promise<void> {
    return this.store.dispose();
  }
}

function reportLoadProblems(problems: LoadProblem[], log: Log): void {
  for (const p of problems) {
    log.warn(`conversations: ${p.code}: ${p.message}${p.keptAsidePath ? ` (kept at ${p.keptAsidePath})` : ''}`);
    const text = p.code === 'restored-from-backup'
      ? vscode.l10n.t('The saved conversations were damaged and have been restored from the backup copy.')
      : p.code === 'unreadable'
        ? vscode.l10n.t('The saved conversations could not be read; they are left untouched on disk.')
        : vscode.l10n.t('Some saved conversations were damaged; everything readable was recovered and the damaged file was kept aside.');
    void vscode.window.showWarningMessage(text);
  }
}

function reportSettingsProblems(problems: readonly SettingProblem[], log: Log): void {
  if (problems.length === 0) return;
  for (const p of problems) log.warn(`setting tritonChatglm.${p.key}: ${p.kind}`);
  const invalid = problems.filter((p) => p.kind === 'invalid' || p.kind === 'portConflict').map((p) => p.key);
  const ignored = problems.filter((p) => p.kind === 'ignoredWorkspaceValue' && p.untrusted).map((p) => p.key);
  const open = vscode.l10n.t('Open Settings');
  if (invalid.length > 0) {
    void vscode.window.showWarningMessage(vscode.l10n.t('Invalid ChatGLM settings are using their defaults: {0}', invalid.join(', ')), open)
      .then((picked) => { if (picked === open) void SettingsService.open(); });
  }
  if (ignored.length > 0) {
    log.warn(`untrusted workspace: ignored workspace values of ${ignored.join(', ')}`);
  }
  for (const p of problems) {
    if (p.kind !== 'deprecated') continue;
    void vscode.window.showInformationMessage(vscode.l10n.t('The setting tritonChatglm.{0} is deprecated and still used: list the GPUs in tritonChatglm.{1} instead (one model instance per GPU).', p.key, p.use), open)
      .then((picked) => { if (picked === open) void SettingsService.open(); });
  }
}
