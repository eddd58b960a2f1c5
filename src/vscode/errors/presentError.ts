// Localized presentation of every typed core error: a headline, the fix, the server's own words where they
// matter (a load failure's reason, verbatim) and the buttons that lead to the fix.
import * as vscode from 'vscode';
import { ChatError } from '../../core/chat';
import { ModelSettingsError } from '../../core/repository';
import { modelDisplayName } from '../../core/models/choice';
import { isServerError } from '../../core/server';
import { isTritonError } from '../../core/triton';
import { COMMANDS, type CommandId } from '../commandIds';
import type { Log } from '../log';
import { chosenModelNow } from '../config/chosenModel';

export type ErrorAction = 'buildImage' | 'openSettings' | 'showLogs' | 'startServer' | 'loadModel' | 'reloadModel' | 'restartServer' | 'chooseWeights' | 'downloadWeights' | 'setTeamKey';

export interface ErrorPresentation {
  code: string;
  message: string;
  fix?: string;
  actions: ErrorAction[];
  /** The user cancelled: say nothing. */
  silent?: boolean;
}

export function presentError(error: unknown): ErrorPresentation {
  if (isServerError(error)) {
    switch (error.code) {
      case 'docker-missing':
        return { code: error.code, message: vscode.l10n.t('Docker was not found.'), fix: vscode.l10n.t('Install Docker Engine, or set the path of the docker command in the settings.'), actions: ['openSettings'] };
      case 'daemon-unreachable':
        return { code: error.code, message: vscode.l10n.t('The Docker daemon is not running or cannot be reached.'), fix: vscode.l10n.t('Start Docker (for example `sudo systemctl start docker`) and try again.'), actions: [] };
      case 'permission-denied':
        return { code: error.code, message: vscode.l10n.t('You do not have permission to use Docker.'), fix: vscode.l10n.t('Add your user to the "docker" group, then log out and back in.'), actions: [] };
      case 'nvidia-runtime-missing':
        return { code: error.code, message: vscode.l10n.t('Docker cannot give the container a GPU: the NVIDIA Container Toolkit is missing or not configured.'), fix: vscode.l10n.t('Install the NVIDIA Container Toolkit, run `sudo nvidia-ctk runtime configure --runtime=docker` and restart Docker.'), actions: ['showLogs'] };
      case 'image-missing':
        return { code: error.code, message: vscode.l10n.t('The Triton serving image is not available on this machine.'), fix: vscode.l10n.t('Build it now (this takes a while and downloads several GB), or set the image in the settings.'), actions: ['buildImage', 'openSettings'] };
      case 'port-allocated':
        return { code: error.code, message: vscode.l10n.t('A port the server needs is already in use.'), fix: vscode.l10n.t('Stop the program that uses it, or choose other ports in the settings.'), actions: ['openSettings'] };
      case 'name-conflict':
        return { code: error.code, message: vscode.l10n.t('A container with the configured name exists but was not started by this extension; it is left untouched.'), fix: vscode.l10n.t('Remove or rename that container, or choose another container name in the settings.'), actions: ['openSettings'] };
      case 'container-exited':
        return { code: error.code, message: error.exitCode !== undefined ? vscode.l10n.t('The server stopped: the Triton container exited with code {0}.', error.exitCode) : vscode.l10n.t('The server stopped: the Triton container exited.'), fix: vscode.l10n.t('Your conversations are kept. Read the server log, then restart the server.'), actions: ['startServer', 'showLogs'] };
      case 'weights-missing':
        return { code: error.code, message: vscode.l10n.t('The {0} weights were not found.', chosenModelNow().displayName), fix: vscode.l10n.t('Download them (Download Weights), or choose the folder of a {0} checkpoint you have (Choose Weights Folder…).', chosenModelNow().displayName), actions: ['downloadWeights', 'chooseWeights'] };
      case 'weights-invalid':
        return { code: error.code, message: vscode.l10n.t('The weights directory does not look like a {0} checkpoint.', chosenModelNow().displayName), fix: vscode.l10n.t('Download it (Download Weights), or choose the folder that contains its config.json, tokenizer and weight files (Choose Weights Folder…).'), actions: ['downloadWeights', 'chooseWeights'] };
      case 'gpu-memory-low':
        return { code: error.code, message: vscode.l10n.t('The GPU may not have enough free memory for {0}.', chosenModelNow().displayName), fix: vscode.l10n.t('Close the programs that use the GPU, or choose another GPU in the settings.'), actions: ['openSettings'] };
      case 'settings-invalid':
        return { code: error.code, message: vscode.l10n.t('A server setting is invalid: {0}', error.message), fix: vscode.l10n.t('Correct it in the settings.'), actions: ['openSettings'] };
      case 'ulimit-denied':
        return { code: error.code, message: vscode.l10n.t('Docker may not raise the container\'s memory-lock or stack limit (rootless Docker, or a daemon without that privilege).'), fix: vscode.l10n.t('Turn off "Raise Ulimits" (tritonChatglm.raiseUlimits) in the settings, or give the Docker daemon the privilege to raise limits.'), actions: ['openSettings'] };
      case 'engine-limits':
        return {
          code: error.code,
          message: error.suggestion
            ? vscode.l10n.t('Podman cannot start containers here: it asks for higher limits than this host allows ({0}) and may not raise them (no CAP_SYS_RESOURCE).', error.detail ?? '')
            : vscode.l10n.t('The container engine may not set the container\'s limits: it asks for more than this host allows.'),
          fix: error.suggestion
            ? vscode.l10n.t('Set in /etc/containers/containers.conf, section [containers]: {0} — or use Docker.', error.suggestion)
            : vscode.l10n.t('With podman, set default_ulimits in /etc/containers/containers.conf to at most this host\'s hard limits; or use Docker.'),
          actions: ['openSettings'],
        };
      case 'files-unreadable':
        return { code: error.code, message: vscode.l10n.t('The server cannot read {0} (in the container it runs as your user).', error.file ?? ''), fix: vscode.l10n.t('Make the file readable to your user (its owner can run chmod -R a+rX on it), then start again.'), actions: ['chooseWeights'] };
      case 'build-failed':
        return { code: error.code, message: error.buildStep ? vscode.l10n.t('Building the serving image failed at {0}', error.buildStep) : vscode.l10n.t('Building the serving image failed.'), fix: vscode.l10n.t('Read the build log above the failing step; fix the Dockerfile or network access, then build again.'), actions: ['showLogs'] };
      case 'liveness-timeout':
        return { code: error.code, message: vscode.l10n.t('The server did not become ready in time.'), fix: vscode.l10n.t('Read the server log for the reason; a first start can take long on a slow disk.'), actions: ['showLogs'] };
      case 'cancelled':
        return { code: error.code, message: vscode.l10n.t('Cancelled.'), actions: [], silent: true };
      case 'unknown':
        return { code: error.code, message: vscode.l10n.t('Docker failed: {0}', error.message), fix: vscode.l10n.t('Read the details in the server log.'), actions: ['showLogs'] };
    }
  }
  if (isTritonError(error)) {
    const server = error.details.serverMessage?.trim();
    switch (error.code) {
      case 'server-not-running':
        return { code: error.code, message: vscode.l10n.t('The Triton server is not running or cannot be reached.'), fix: vscode.l10n.t('Start the server, or check the external server URL.'), actions: ['startServer', 'showLogs'] };
      case 'connection-lost':
        return { code: error.code, message: vscode.l10n.t('The connection to the server was lost while the answer was being written; the server is still running.'), fix: vscode.l10n.t('Ask again: the partial answer is kept. If it keeps happening, check a proxy or the network between you and the server.'), actions: [] };
      case 'model-not-loaded':
        return { code: error.code, message: vscode.l10n.t('{0} is not loaded.', error.details.model ? modelDisplayName(error.details.model) : chosenModelNow().displayName), fix: vscode.l10n.t('Load the model first.'), actions: ['loadModel'] };
      case 'model-load-failed':
        return { code: error.code, message: vscode.l10n.t('{0} failed to load: {1}', error.details.model ? modelDisplayName(error.details.model) : chosenModelNow().displayName, server || error.message), fix: vscode.l10n.t('Read the server log; check GPU memory, the weights path and the model settings.'), actions: ['showLogs', 'openSettings'] };
      case 'model-failed':
        return { code: error.code, message: vscode.l10n.t('The model failed: reload it. ({0})', server || error.message), fix: vscode.l10n.t('Reload Model starts a new model process; if it fails again, read the server log and check the GPU.'), actions: ['reloadModel', 'showLogs'] };
      case 'server-busy':
        return { code: error.code, message: vscode.l10n.t('The server is busy: its request queue is full.'), fix: vscode.l10n.t('Try again when the current requests finish, or raise the maximum queue size.'), actions: [] };
      case 'invalid-request':
        return { code: error.code, message: vscode.l10n.t('The model rejected the request: {0}', server || error.message), fix: vscode.l10n.t('Shorten the question or the history, or check the generation settings.'), actions: ['openSettings'] };
      case 'timeout':
        return { code: error.code, message: vscode.l10n.t('The server did not answer in time.'), fix: vscode.l10n.t('The request was cancelled. Check the server log, or raise the timeouts in the settings.'), actions: ['showLogs', 'openSettings'] };
      case 'cancelled':
        return { code: error.code, message: vscode.l10n.t('Cancelled.'), actions: [], silent: true };
      case 'unauthorized':
        return { code: error.code, message: vscode.l10n.t('The server refused the request: this API needs the admin key.'), fix: vscode.l10n.t('For an external server, add the needed header in the settings; for the managed server, restart it.'), actions: ['openSettings'] };
      case 'key-rejected':
        return { code: error.code, message: vscode.l10n.t('The team server refused your API key (none was set, or it is unknown or revoked).'), fix: vscode.l10n.t('Set your team key with "ChatGLM: Set Team API Key"; ask the team admin for a key.'), actions: ['setTeamKey'] };
      case 'forbidden':
        return { code: error.code, message: vscode.l10n.t('The team server does not allow this request: model control and other admin APIs are not available through it.'), fix: vscode.l10n.t('Ask the team admin; the server is managed on its own machine.'), actions: [] };
      case 'replica-failed':
        return { code: error.code, message: vscode.l10n.t('A replica of the team server failed while answering, or none is available.'), fix: vscode.l10n.t('Ask again: the proxy sends the request to a healthy replica. If it keeps failing, tell the team admin.'), actions: [] };
      case 'unexpected':
        return { code: error.code, message: vscode.l10n.t('Unexpected answer from Triton: {0}', error.message), fix: vscode.l10n.t('Read the details in the server log.'), actions: ['showLogs'] };
    }
  }
  if (error instanceof ModelSettingsError) {
    return { code: error.code, message: vscode.l10n.t('The model settings are invalid: {0}', error.issues.map((i) => `${i.field}: ${i.message}`).join('; ')), fix: vscode.l10n.t('Correct them in the settings.'), actions: ['openSettings'] };
  }
  if (error instanceof ChatError) {
    switch (error.code) {
      case 'answer-in-progress':
        return { code: error.code, message: vscode.l10n.t('An answer is still being generated in this conversation.'), actions: [] };
      case 'empty-text':
        return { code: error.code, message: vscode.l10n.t('The message is empty.'), actions: [] };
      case 'nothing-to-regenerate':
      case 'nothing-to-edit':
        return { code: error.code, message: vscode.l10n.t('There is no question to answer again.'), actions: [] };
      case 'nothing-to-continue':
        return { code: error.code, message: vscode.l10n.t('Only the last answer, cut at the maximum length, can be continued.'), actions: [] };
      default:
        return { code: error.code, message: vscode.l10n.t('The conversation was not found.'), actions: [] };
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'unknown', message: vscode.l10n.t('Unexpected error: {0}', message), actions: ['showLogs'] };
}

/** One line for places without buttons (the chat panel, a comment thread). */
export function errorText(p: ErrorPresentation): string {
  return p.fix ? `${p.message} ${p.fix}` : p.message;
}

const ACTION_COMMANDS: Record<ErrorAction, CommandId> = {
  buildImage: COMMANDS.buildServingImage,
  openSettings: COMMANDS.openSettings,
  showLogs: COMMANDS.showServerLogs,
  startServer: COMMANDS.startServer,
  loadModel: COMMANDS.loadModel,
  reloadModel: COMMANDS.loadModel,
  restartServer: COMMANDS.restartServer,
  chooseWeights: COMMANDS.chooseWeightsFolder,
  downloadWeights: COMMANDS.downloadWeights,
  setTeamKey: COMMANDS.setTeamKey,
};

/** Reload Model after a device fault: unload the failed copy first (see ServerSession.load's `fresh`). */
const ACTION_ARGS: Partial<Record<ErrorAction, unknown[]>> = { reloadModel: [{ fresh: true }] };

function actionLabel(action: ErrorAction): string {
  switch (action) {
    case 'buildImage': return vscode.l10n.t('Build Serving Image');
    case 'openSettings': return vscode.l10n.t('Open Settings');
    case 'showLogs': return vscode.l10n.t('Show Server Logs');
    case 'startServer': return vscode.l10n.t('Start Server');
    case 'loadModel': return vscode.l10n.t('Load Model');
    case 'reloadModel': return vscode.l10n.t('Reload Model');
    case 'restartServer': return vscode.l10n.t('Restart Server');
    case 'chooseWeights': return vscode.l10n.t('Choose Weights Folder…');
    case 'downloadWeights': return vscode.l10n.t('Download Weights');
    case 'setTeamKey': return vscode.l10n.t('Set Team API Key…');
  }
}

/** Logs the error (with its evidence) and shows it with its action buttons; cancellations stay quiet. */
export async function showError(log: Log, context: string, error: unknown): Promise<void> {
  const p = presentError(error);
  log.error(`${context} [${p.code}]`, error);
  if (p.silent) return;
  await showWithActions(errorText(p), p);
}

/** Shows `text` (an error's text, or a sentence around it) with the buttons of its presentation; runs the one picked. */
export async function showWithActions(text: string, p: ErrorPresentation): Promise<void> {
  const buttons = p.actions.map((a) => ({ title: actionLabel(a), action: a }));
  const picked = await vscode.window.showErrorMessage(text, ...buttons);
  if (picked) await vscode.commands.executeCommand(ACTION_COMMANDS[picked.action], ...ACTION_ARGS[picked.action] ?? []);
}
