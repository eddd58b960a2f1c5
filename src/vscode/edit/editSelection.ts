// Edit Selection…: the user says what to change; every selection (multi-cursor included) is rewritten by its own
// request, all sent together so the server batches them, and the rewrites stream into one diff editor (a proposal
// per selection) where the user accepts or discards them (proposalReview.ts). The prompt asks for the code only;
// a reply that talks around a fenced block gives the block (src/core/edit/editPrompt.ts).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { requestAnswer, toAnswerSettings } from '../../core/chat/answerRunner';
import { failureCause, type ExplainFailure } from '../../core/chat/failureCause';
import { buildEditPrompt, extractCode } from '../../core/edit/editPrompt';
import { usableSelections } from '../../core/explain/explainPrompt';
import { fanout } from '../../core/explain/fanout';
import { canInfer } from '../../core/state/lifecycle';
import type { TritonClient } from '../../core/triton';
import type { SettingsService } from '../config/settingsService';
import { errorText, presentError, showWithActions } from '../errors/presentError';
import type { Log } from '../log';
import { offerToGetReady } from '../server/offerToGetReady';
import type { LifecycleStore } from '../state/lifecycleStore';
import { PROPOSAL_SCHEME, type ProposalReviews } from './proposalReview';

export interface EditSelectionDeps {
  reviews: ProposalReviews;
  store: LifecycleStore;
  settings: SettingsService;
  log: Log;
  client(): TritonClient | undefined;
  /** Triton's name of the model that answers. */
  modelName(): string;
  /** Counts the request while it runs (the server session's health polling). */
  track<T>(request: Promise<T>): Promise<T>;
  /** A rewrite found no server: our container's exit, when that is why (ServerSession.explainFailure). */
  explainFailure?: ExplainFailure;
}

export async function editSelection(editor: vscode.TextEditor | undefined, deps: EditSelectionDeps): Promise<void> {
  if (!editor || editor.document.uri.scheme === PROPOSAL_SCHEME) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to edit it.'));
    return;
  }
  const client = deps.client();
  if (!client || !canInfer(deps.store.current)) {
    await offerToGetReady(deps.store.current, deps.modelName());
    return;
  }
  const doc = editor.document;
  const selections = usableSelections(editor.selections.map((sel) => ({
    range: new vscode.Range(sel.start, sel.end), text: doc.getText(sel), start: doc.offsetAt(sel.start), end: doc.offsetAt(sel.end),
  })));
  if (selections.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('Select code in an editor to edit it.'));
    return;
  }
  const instruction = await vscode.window.showInputBox({
    title: vscode.l10n.t('ChatGLM: Edit Selection'),
    prompt: selections.length === 1
      ? vscode.l10n.t('What should change in the selected code?')
      : vscode.l10n.t('What should change in each of the {0} selections?', selections.length),
    placeHolder: vscode.l10n.t('For example: add type hints, handle an empty list'),
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : vscode.l10n.t('Say what should change.')),
  });
  if (!instruction?.trim()) return;
  const fileName = path.basename(doc.fileName || doc.uri.path) || doc.uri.path;
  const prompts = selections.map((s) => buildEditPrompt({ instruction, code: s.text, languageId: doc.languageId, fileName }, (what, lang, file) => [
    vscode.l10n.t('Rewrite this {0} code from {1} as follows: {2}', lang, file, what),
    vscode.l10n.t('Reply with the complete rewritten code in one fenced code block and nothing else. Keep everything that is not asked to change, including indentation and comments.'),
  ].join('\n')));
  const review = await deps.reviews.open('edit', editor, selections.map((s) => s.range));
  const settings = deps.settings.current;
  const answer = toAnswerSettings(settings);
  deps.log.info(`edit: ${selections.length} selection(s) of ${fileName}, up to ${settings.explainMaxConcurrency} at once`);
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: vscode.l10n.t('ChatGLM: writing the edit') }, async () => {
    const outcomes = await fanout(prompts, async (prompt, i, signal) => {
      let reply = '';
      await deps.track(requestAnswer(client, { prompt, history: [], temperature: answer.temperature, topP: answer.topP, maxNewTokens: answer.maxNewTokens }, {
        model: deps.modelName(),
        streaming: answer.streaming,
        ...(signal ? { signal } : {}),
        idleTimeoutMs: answer.streamIdleTimeoutMs,
        timeoutMs: answer.requestTimeoutMs,
        onDelta: (delta) => {
          reply += delta;
          const { code } = extractCode(reply, { final: false });
          if (code) review.setCode(i, code);
        },
      }));
      const { code } = extractCode(reply, { final: true });
      review.setCode(i, code || undefined);
    }, { concurrency: settings.explainMaxConcurrency, signal: review.signal });
    if (review.signal.aborted) return; // discarded: nothing more to say
    const failed = outcomes.filter((o) => o.status === 'rejected');
    review.finish();
    if (failed.length > 0) {
      // A container killed mid-rewrite is reported as its exit (with Start), as the chat panel and Explain do.
      const first = await failureCause(failed[0]!.error, deps.explainFailure);
      const p = presentError(first);
      deps.log.error(`edit: a rewrite failed [${p.code}]`, first);
      void showWithActions(failed.length === outcomes.length
        ? vscode.l10n.t('The rewrite failed: {0}', errorText(p))
        : vscode.l10n.t('{0} of {1} rewrites failed (their code is left as it is): {2}', failed.length, outcomes.length, errorText(p)), p);
    }
  });
}
