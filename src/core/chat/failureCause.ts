// Why an answer failed, as the person should be told: a request that found no server (refused, or its stream cut)
// may have met our container's exit, which is then reported instead (its code and last lines, with Start) — the
// same for the chat panel, Explain, Edit Selection and the CLI.
import { isTritonError } from '../triton';

/** Asks the server's side what happened to a request that found no server (ServerSession.explainFailure). */
export type ExplainFailure = (error: unknown) => Promise<unknown>;

/** The request found no server: refused, or the stream broke before the answer ended. */
export function foundNoServer(error: unknown): boolean {
  return isTritonError(error, 'server-not-running') || isTritonError(error, 'connection-lost');
}

/**
 * What to report for `error`: the container's exit when the request found no server and the session knows that
 * the container exited; otherwise (or when asking fails) the error itself.
 */
export async function failureCause(error: unknown, explain: ExplainFailure | undefined): Promise<unknown> {
  if (!explain || !foundNoServer(error)) return error;
  return (await explain(error).catch(() => undefined)) ?? error;
}
