// What the session reads off the server and its errors: the model's state (index, or readiness where the
// repository API is restricted), a failure as the lifecycle keeps it, whether an error means "cancelled", and a
// container log line as a person wants to read it.
import { isServerError } from '../server';
import type { LifecycleFailure, ModelObservation } from '../state/lifecycle';
import { isTritonError, TritonError, type RepositoryIndexEntry } from '../triton';
import type { SessionClient } from './ports';

/** The model as the server reports it: its index row, or (without the admin key) only whether it is ready. */
export type ModelReport =
  | { via: 'index'; row: RepositoryIndexEntry | undefined }
  | { via: 'readiness'; ready: boolean };

export async function reportModel(client: SessionClient, modelName: string, timeoutMs = 5_000): Promise<ModelReport> {
  try {
    return { via: 'index', row: await client.modelState(modelName, { timeoutMs }) };
  } catch (e) {
    // An external server may restrict the repository API; readiness is public.
    if (isTritonError(e, 'unauthorized')) return { via: 'readiness', ready: await client.isModelReady(modelName, { timeoutMs }) };
    throw e;
  }
}

export function toObservation(report: ModelReport): { model: ModelObservation; modelError?: LifecycleFailure } {
  if (report.via === 'readiness') return { model: report.ready ? 'ready' : 'unloaded' };
  const row = report.row;
  switch (row?.state) {
    case 'READY': return { model: 'ready' };
    case 'LOADING': return { model: 'loading' };
    case 'UNLOADING': return { model: 'unloading' };
    case 'UNAVAILABLE':
      if (row.reason && row.reason !== 'unloaded') return { model: 'failed', modelError: { code: 'model-load-failed', message: row.reason } };
      return { model: 'unloaded' };
    default: return { model: 'unloaded' };
  }
}

export function failure(e: unknown): LifecycleFailure {
  if (isServerError(e) || e instanceof TritonError) {
    const reason = e instanceof TritonError ? e.details.serverMessage ?? e.message : e.message;
    return { code: e.code, message: reason };
  }
  return { code: 'unknown', message: e instanceof Error ? e.message : String(e) };
}

export function isCancellation(e: unknown): boolean {
  return (isServerError(e) && e.code === 'cancelled') || isTritonError(e, 'cancelled') || (e instanceof Error && e.name === 'AbortError');
}

/**
 * A container log line for a progress message: without glog's "I1130 08:07:46.04 11203 file.cc:12]" prefix and
 * the quotes around it; undefined for lines not worth showing (empty, table borders).
 */
export function readableLogLine(line: string): string | undefined {
  const text = line.replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\]\s*/, '').replace(/^"(.*)"$/, '$1').trim();
  return text && !/^[+|-]/.test(text) ? text : undefined;
}
