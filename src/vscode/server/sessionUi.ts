// The server session's user interface in VS Code: each operation as a progress notification with its elapsed
// time and its phase in the user's words ("loading weights 3/7", "warming up": src/core/session/loadPhase.ts
// derives them from what the server reports; Triton's raw lines stay in Show Server Logs), the offer to load after
// a start (closing itself once it no longer applies), and errors with their fixes.
import * as vscode from 'vscode';
import type { SessionOperation, SessionStep, SessionUi } from '../../core/session';
import { LoadPhases, type ProgressPhase } from '../../core/session/loadPhase';
import { showError } from '../errors/presentError';
import type { Log } from '../log';
import { COMMANDS } from '../commandIds';
import { showNotice } from '../util/notice';
import { withElapsedProgress } from '../util/progress';

/** `modelName`: the display name of the model the session serves ("Loading GLM-4-9B-Chat"). */
export function createSessionUi(log: Log, modelName: () => string): SessionUi {
  return {
    progress: (operation, task, signal) => Promise.resolve(withElapsedProgress({ title: titleOf(operation, modelName()), cancellable: operation === 'start' || operation === 'load', signal }, (reporter, taskSignal) => {
      const phases = new LoadPhases();
      const show = (phase: ProgressPhase | undefined) => { if (phase) reporter.step(phaseText(phase)); };
      return task({
        step: (step) => show(phases.step(step)),
        detail: (text) => show(phases.logLine(text)),
        loadProgress: () => undefined, // the index says "loading" until it says "ready": nothing a person needs
      }, taskSignal);
    })),
    // The offer's link runs Load Model itself; the offer closes when the model loads or the server stops.
    offerLoad: async (stale) => {
      await showNotice(vscode.l10n.t('The {0} server is running. Load the model now?', modelName()), [{ label: vscode.l10n.t('Load Model'), command: COMMANDS.loadModel }], stale);
      return false;
    },
    showError: (context, error) => void showError(log, context === 'load' ? 'Load' : 'Server', error),
  };
}

function titleOf(operation: SessionOperation, modelName: string): string {
  switch (operation) {
    case 'start': return vscode.l10n.t('Starting the ChatGLM server');
    case 'stop': return vscode.l10n.t('Stopping the ChatGLM server');
    case 'load': return vscode.l10n.t('Loading {0}', modelName);
    case 'unload': return vscode.l10n.t('Unloading {0}', modelName);
  }
}

function stepText(step: SessionStep): string {
  switch (step) {
    case 'preparing-repository': return vscode.l10n.t('Preparing the model repository');
    case 'preflight': return vscode.l10n.t('Checking Docker, the GPU, the serving image, the weights and the ports');
    case 'removing-old': return vscode.l10n.t('Removing the old stopped container');
    case 'running': return vscode.l10n.t('Starting the container');
    case 'waiting-live': return vscode.l10n.t('Waiting for Triton to answer');
    case 'live': return vscode.l10n.t('Triton is live');
    case 'stopping-container': return vscode.l10n.t('Stopping the container');
    case 'writing-config': return vscode.l10n.t('Writing the model configuration');
    case 'unloading-old': return vscode.l10n.t('Unloading the old model');
    case 'loading-weights': return vscode.l10n.t('Loading the weights onto the GPU');
    case 'waiting-for-requests': return vscode.l10n.t('Waiting for running requests to finish');
  }
}

function phaseText(phase: ProgressPhase): string {
  switch (phase.kind) {
    case 'step': return stepText(phase.step);
    case 'loading-weights': return phase.shard
      ? vscode.l10n.t('Loading the weights onto the GPU: file {0} of {1}', phase.shard.index, phase.shard.total)
      : vscode.l10n.t('Loading the weights onto the GPU');
    case 'warming-up': return vscode.l10n.t('Warming up: the model answers its first test requests');
  }
}
