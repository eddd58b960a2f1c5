// Where each explanation of a run waits, in its thread's words: behind how many requests of its own run (the
// concurrency limit), or at the server (its queue, read from the scheduler's metrics while anything waits there).
import * as vscode from 'vscode';
import { queuePositions, type ExplainPhase, type QueuePosition } from '../../core/explain/queuePosition';
import type { ServerQueue } from '../../core/status/schedulerFigures';
import { plural } from '../util/plural';
import type { ExplanationThread } from './explanationThread';

/** While an explanation waits at the server, its queue is read this often. */
export const QUEUE_POLL_MS = 1_000;

/** The explanations of one run, in sending order: their phases and what their waiting threads say. */
export class ExplainRun {
  readonly phases: ExplainPhase[];
  private server: ServerQueue | undefined;
  private poll: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly threads: readonly ExplanationThread[],
    private readonly concurrency: number,
    private readonly readQueue: () => Promise<ServerQueue | undefined>,
  ) {
    this.phases = threads.map(() => 'queued');
    this.render();
  }

  set(index: number, phase: ExplainPhase): void {
    if (this.phases[index] === phase) return;
    this.phases[index] = phase;
    this.watchServer();
    this.render();
  }

  /** Every thread still waiting says where (answering and finished ones are written by their answers). */
  private render(): void {
    queuePositions(this.phases, this.server).forEach((position, i) => {
      const phase = this.phases[i];
      if (phase === 'queued' || phase === 'sent') this.threads[i]!.show(waitingText(position, this.concurrency), waitingLabel(position));
    });
  }

  /** Reads the server's queue while an explanation waits there; stops when none does. */
  private watchServer(): void {
    const waiting = this.phases.includes('sent');
    if (waiting && !this.poll) {
      this.poll = setInterval(() => void this.refreshQueue(), QUEUE_POLL_MS);
      void this.refreshQueue();
    } else if (!waiting && this.poll) {
      this.stop();
    }
  }

  private async refreshQueue(): Promise<void> {
    this.server = await this.readQueue().catch(() => undefined);
    if (this.poll) this.render();
  }

  stop(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }
}

function waitingLabel(position: QueuePosition): string {
  return position.where === 'none' ? vscode.l10n.t('waiting…') : vscode.l10n.t('queued');
}

function waitingText(position: QueuePosition, concurrency: number): string {
  switch (position.where) {
    case 'client':
      return `${queuedBehind(position.ahead)} ${plural(concurrency,
        vscode.l10n.t('One explanation is sent at a time (tritonChatglm.explainMaxConcurrency).'),
        vscode.l10n.t('Up to {0} explanations are sent at once (tritonChatglm.explainMaxConcurrency).', concurrency))}`;
    case 'server': {
      const generating = position.active ? ` ${plural(position.active,
        vscode.l10n.t('The server is generating 1 answer; a row is free when it ends.'),
        vscode.l10n.t('The server is generating {0} answers; a row is free when one of them ends.', position.active))}` : '';
      const ahead = position.ahead === 0 ? vscode.l10n.t('Next in line at the server.')
        : position.ahead === 1 ? vscode.l10n.t('Queued behind 1 request at the server.') : vscode.l10n.t('Queued behind {0} requests at the server.', position.ahead);
      return `${ahead}${generating}`;
    }
    case 'none':
      return vscode.l10n.t('Waiting for the server…');
  }
}

function queuedBehind(ahead: number): string {
  return ahead === 1 ? vscode.l10n.t('Queued behind 1 request.') : vscode.l10n.t('Queued behind {0} requests.', ahead);
}

