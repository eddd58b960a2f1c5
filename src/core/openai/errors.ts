// Errors of the OpenAI-compatible endpoint in OpenAI's shape, `{"error": {message, type, param, code}}`, and how a
// schema problem or a Triton failure becomes one. Messages that come from the server are passed on as text (JSON
// escapes them); nothing here is ever rendered as HTML.
import type { z } from 'zod';
import type { TritonError } from '../triton/errors';
import type { ErrorBody } from './schemas';

export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'server_error' | 'service_unavailable';

export class OpenAiError extends Error {
  override readonly name = 'OpenAiError';
  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAiErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A 400 naming the request field at fault. */
export const invalidField = (param: string, message: string, code = 'invalid_value'): OpenAiError =>
  new OpenAiError(400, message, 'invalid_request_error', param, code);

/** `messages.0.content` → `messages[0].content`, the way OpenAI names a field of a list. */
export function fieldName(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out;
}

/** The first problem zod found, as a 400 naming its field. */
export function fromZodError(error: z.ZodError): OpenAiError {
  const issue = error.issues[0];
  const param = issue ? fieldName(issue.path) : '';
  const message = issue ? `${param || 'body'}: ${issue.message}` : 'The request body is not valid.';
  return new OpenAiError(400, message, 'invalid_request_error', param || null, issue?.code === 'invalid_type' || issue?.code === 'invalid_union' ? 'invalid_type' : 'invalid_value');
}

/** A failure of the request on Triton, in OpenAI's terms: the client's fault is a 400, the rest 5xx to retry later. */
export function fromTritonError(e: TritonError): OpenAiError {
  const text = e.details.serverMessage ? `${e.message} (${e.details.serverMessage})` : e.message;
  switch (e.code) {
    case 'invalid-request': return new OpenAiError(400, text, 'invalid_request_error', null, 'invalid_request');
    case 'model-not-loaded': return new OpenAiError(503, `${text} Load the model first (triton-chatglm load, or Load Model in VS Code).`, 'service_unavailable', null, 'model_not_loaded');
    case 'server-busy': return new OpenAiError(503, text, 'service_unavailable', null, 'server_busy');
    case 'model-failed': return new OpenAiError(503, text, 'service_unavailable', null, 'model_failed');
    case 'timeout': return new OpenAiError(504, text, 'server_error', null, 'timeout');
    case 'server-not-running':
    case 'connection-lost':
    case 'unauthorized':
    case 'key-rejected':
    case 'forbidden':
    case 'replica-failed': return new OpenAiError(502, text, 'server_error', null, 'upstream_unavailable');
    case 'cancelled':
    case 'model-load-failed':
    case 'unexpected': return new OpenAiError(500, text, 'server_error', null, 'server_error');
  }
}
