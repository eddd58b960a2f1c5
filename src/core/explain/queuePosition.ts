// Where each explanation of one Explain run stands while it waits, so its thread can say "queued behind n requests"
// instead of a bare "waiting". Two queues can hold it: our own fan-out (at most explainMaxConcurrency requests are
// sent at once; the rest wait for a lane) and the server's (a sent request waits there while every row is busy).
import type { ServerQueue } from '../status/schedulerFigures';

/** An explanation's progress: not sent yet, sent without a first token, streaming, finished. */
export type ExplainPhase = 'queued' | 'sent' | 'answering' | 'done';


export type QueuePosition =
  /** Waits for one of our own lanes: `ahead` = our requests running plus the explanations before it in line. */
  | { where: 'client'; ahead: number }
  /** Sent, and the server has a queue: at most `ahead` requests are before it there. */
  | { where: 'server'; ahead: number; active?: number }
  /** Not waiting in a queue we can see (streaming, done, or sent while the server has no queue). */
  | { where: 'none' };

/**
 * The position of every explanation of a run, in the run's (sending) order. The server's queue is first come, first
 * served and our requests went out in order, so of the `waiting` requests there, the ones we sent after an
 * explanation are behind it: it has at most `waiting - 1 - (ours sent after it and still waiting)` ahead.
 */
export function queuePositions(phases: readonly ExplainPhase[], server?: ServerQueue): QueuePosition[] {
  const running = phases.filter((p) => p === 'sent' || p === 'answering').length;
  let queuedBefore = 0;
  let sentAfter = phases.filter((p) => p === 'sent').length;
  return phases.map((phase) => {
    switch (phase) {
      case 'queued': {
        // The first in line with nothing running is about to be sent, not waiting behind anything.
        const ahead = running + queuedBefore++;
        return ahead > 0 ? { where: 'client', ahead } : { where: 'none' };
      }
      case 'sent': {
        sentAfter--;
        if (!server || server.waiting <= 0) return { where: 'none' };
        const position: QueuePosition = { where: 'server', ahead: Math.max(0, server.waiting - 1 - sentAfter) };
        if (server.active !== undefined) position.active = server.active;
        return position;
      }
      default:
        return { where: 'none' };
    }
  });
}
