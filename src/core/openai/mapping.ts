// OpenAI requests → the model's request, in ChatGLM3's history format (src/core/chat/messages: the same
// ChatRequest the chat panel and the CLI send through src/core/triton/chatglm.ts), or for /v1/completions a raw
// continuation of the prompt. What this model cannot do is refused with a 400 naming the field, never silently
// ignored: several answers (n, best_of), tools, images and audio, log probabilities, penalties, structured output,
// fill in the middle (suffix).
import type { ChatMessage, ChatRequest, ChatRole } from '../chat/messages';
import { invalidField, OpenAiError } from './errors';
import type { ChatCompletionRequest, CompletionRequest, OpenAiChatMessage } from './schemas';

/** What one OpenAI request asks of the model and of the adapter around it. */
export interface MappedRequest {
  request: ChatRequest;
  /** Stop sequences: the model's `stop` input (it ends the row at the step that completed one). */
  stop: string[];
  /** /v1/completions: `request.prompt` is continued as raw text (the model's `raw_prompt` input), no chat turn. */
  raw: boolean;
  stream: boolean;
  /** Streaming: a last chunk with `usage` before `[DONE]`. */
  includeUsage: boolean;
}

/** Sampling values the model is sent when the request leaves them out: every request carries the same inputs. */
export interface SamplingDefaults {
  temperature: number;
  topP: number;
  maxNewTokens: number;
}

type Sampling = Pick<ChatCompletionRequest, 'temperature' | 'top_p' | 'seed' | 'stop' | 'n' | 'logprobs' | 'frequency_penalty' | 'presence_penalty' | 'logit_bias' | 'stream' | 'stream_options'>;

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** The model's limit per stop sequence (chatglm/serving/stop_texts.py). */
export const MAX_STOP_CHARS = 256;

function refuseCommon(body: Sampling): void {
  if (present(body.n) && body.n !== 1) throw invalidField('n', 'n > 1 is not supported: this endpoint returns one choice per request.', 'unsupported_value');
  if (present(body.logprobs) && body.logprobs !== false) throw invalidField('logprobs', 'logprobs are not supported by this endpoint.', 'unsupported_parameter');
  if (present(body.frequency_penalty) && body.frequency_penalty !== 0) throw invalidField('frequency_penalty', 'frequency_penalty is not supported (only 0).', 'unsupported_value');
  if (present(body.presence_penalty) && body.presence_penalty !== 0) throw invalidField('presence_penalty', 'presence_penalty is not supported (only 0).', 'unsupported_value');
  const bias = body.logit_bias;
  if (present(bias) && !(typeof bias === 'object' && bias !== null && Object.keys(bias).length === 0)) {
    throw invalidField('logit_bias', 'logit_bias is not supported by this endpoint.', 'unsupported_parameter');
  }
}

function refuseChatOnly(body: ChatCompletionRequest): void {
  if (present(body.top_logprobs)) throw invalidField('top_logprobs', 'top_logprobs are not supported by this endpoint.', 'unsupported_parameter');
  if (present(body.tools) && !(Array.isArray(body.tools) && body.tools.length === 0)) throw invalidField('tools', 'tools are not supported: this model is served without tool calling.', 'unsupported_parameter');
  if (present(body.tool_choice) && body.tool_choice !== 'none') throw invalidField('tool_choice', 'tool_choice is not supported: this model is served without tool calling.', 'unsupported_parameter');
  if (present(body.functions)) throw invalidField('functions', 'functions are not supported: this model is served without tool calling.', 'unsupported_parameter');
  if (present(body.function_call)) throw invalidField('function_call', 'function_call is not supported: this model is served without tool calling.', 'unsupported_parameter');
  if (body.response_format && body.response_format.type !== 'text') throw invalidField('response_format', `response_format '${body.response_format.type}' is not supported (only 'text').`, 'unsupported_value');
  if (present(body.audio)) throw invalidField('audio', 'audio output is not supported: this model writes text only.', 'unsupported_parameter');
  if (body.modalities && body.modalities.some((m) => m !== 'text')) throw invalidField('modalities', "only the 'text' modality is supported.", 'unsupported_value');
  if (present(body.prediction)) throw invalidField('prediction', 'predicted outputs are not supported by this endpoint.', 'unsupported_parameter');
}

/** A message's text; image, audio and file parts are refused with the part's field named. */
function messageText(m: OpenAiChatMessage, i: number): string {
  if (m.content === undefined || m.content === null) return '';
  if (typeof m.content === 'string') return m.content;
  return m.content.map((part, j) => {
    if (part.type !== 'text' || part.text === undefined) {
      throw invalidField(`messages[${i}].content[${j}].type`, `content parts of type '${part.type}' are not supported: this model reads text only.`, 'unsupported_value');
    }
    return part.text;
  }).join('\n');
}

function chatRole(m: OpenAiChatMessage, i: number): Exclude<ChatRole, 'observation'> {
  switch (m.role) {
    case 'system':
    case 'developer': return 'system';
    case 'user': return 'user';
    case 'assistant':
      if (m.tool_calls && m.tool_calls.length > 0) throw invalidField(`messages[${i}].tool_calls`, 'tool calls are not supported: this model is served without tool calling.', 'unsupported_parameter');
      if (present(m.function_call)) throw invalidField(`messages[${i}].function_call`, 'function calls are not supported: this model is served without tool calling.', 'unsupported_parameter');
      return 'assistant';
    case 'tool':
    case 'function': throw invalidField(`messages[${i}].role`, `messages with role '${m.role}' are not supported: this model is served without tool calling.`, 'unsupported_value');
  }
}

function stopList(stop: string | string[] | null | undefined): string[] {
  const list = stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
  list.forEach((s, i) => {
    const field = typeof stop === 'string' ? 'stop' : `stop[${i}]`;
    if (s === '') throw invalidField(field, 'a stop sequence must not be empty.');
    if (s.length > MAX_STOP_CHARS) throw invalidField(field, `a stop sequence may have at most ${MAX_STOP_CHARS} characters; this one has ${s.length}.`);
  });
  return list;
}

/** Sampling settings and the stream flags, shared by both endpoints. */
function sampling(body: Sampling & { max_tokens?: number | null }, maxTokens: number | null | undefined, defaults: SamplingDefaults): Settings {
  refuseCommon(body);
  // top_p 0 keeps only the most likely token (the model always keeps that one): greedy decoding.
  const greedy = body.top_p === 0;
  const out: Settings = {
    temperature: greedy ? 0 : body.temperature ?? defaults.temperature,
    topP: greedy ? 1 : body.top_p ?? defaults.topP,
    maxNewTokens: maxTokens ?? defaults.maxNewTokens,
    stop: stopList(body.stop),
    stream: body.stream === true,
    includeUsage: body.stream === true && body.stream_options?.include_usage === true,
  };
  if (present(body.stream_options) && body.stream !== true) throw invalidField('stream_options', 'stream_options is only allowed when stream is true.');
  if (body.seed !== undefined && body.seed !== null) out.seed = body.seed;
  return out;
}

type Settings = Omit<ChatRequest, 'prompt' | 'history'> & Omit<MappedRequest, 'request' | 'raw'>;

function split(mapped: Settings, prompt: string, history: ChatMessage[], raw: boolean): MappedRequest {
  const { stop, stream, includeUsage, ...rest } = mapped;
  return { request: { prompt, history, ...rest }, stop, stream, includeUsage, raw };
}

/**
 * chat/completions: the last message is the question (ChatGLM3's `prompt`, it must come from the user); the ones
 * before it are the history, in order, each with its role (developer = system).
 */
export function mapChatCompletion(body: ChatCompletionRequest, defaults: SamplingDefaults): MappedRequest {
  refuseChatOnly(body);
  const messages: ChatMessage[] = body.messages.map((m, i) => ({ role: chatRole(m, i), content: messageText(m, i) }));
  const last = messages.length - 1;
  if (messages[last].role !== 'user') {
    throw invalidField('messages', `the last message must have role 'user' (it is the question the model answers); got '${body.messages[last].role}'.`);
  }
  const prompt = messages[last].content;
  if (prompt.trim() === '') throw invalidField(`messages[${last}].content`, 'the last user message is empty.');
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  return split(sampling(body, maxTokens, defaults), prompt, messages.slice(0, last), false);
}

/**
 * completions: a raw continuation. The model gets its prefix tokens and the prompt's text (no chat template, no role
 * tokens) and writes on until its end-of-text token, max_tokens or a stop sequence. One prompt per request; `echo`
 * puts the prompt before the continuation.
 */
export function mapCompletion(body: CompletionRequest, defaults: SamplingDefaults): MappedRequest & { echo: boolean } {
  if (present(body.suffix)) throw invalidField('suffix', 'suffix (fill in the middle) is not supported by this endpoint.', 'unsupported_parameter');
  if (present(body.best_of) && body.best_of !== 1) throw invalidField('best_of', 'best_of > 1 is not supported: this endpoint returns one choice per request.', 'unsupported_value');
  if (Array.isArray(body.prompt) && body.prompt.length !== 1) {
    throw invalidField('prompt', `prompt must be one string (or a list of one); got a list of ${body.prompt.length}: this endpoint returns one choice per request.`, 'unsupported_value');
  }
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0];
  // Whitespace is text to continue (indentation, a new line); only nothing at all is refused.
  if (prompt === '') throw invalidField('prompt', 'the prompt is empty.');
  return { ...split(sampling(body, body.max_tokens, defaults), prompt, [], true), echo: body.echo === true };
}

/** A model name other than the one served: OpenAI's 404. */
export function unknownModel(name: string, served: string): OpenAiError {
  return new OpenAiError(404, `The model '${name}' does not exist here; this endpoint serves '${served}'.`, 'not_found_error', 'model', 'model_not_found');
}

/** The sampling defaults of the model's configuration (what its config.pbtxt sends when an input is absent). */
export function modelSamplingDefaults(settings: { defaultTemperature: number; defaultTopP: number; defaultMaxNewTokens: number }): SamplingDefaults {
  return { temperature: settings.defaultTemperature, topP: settings.defaultTopP, maxNewTokens: settings.defaultMaxNewTokens };
}
