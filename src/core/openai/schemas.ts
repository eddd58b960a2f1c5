// The OpenAI API shapes the endpoint reads and writes, as zod schemas (the source of truth; the types are inferred
// from them). Requests are parsed at runtime: unknown fields a client may add (`user`, `store`, `metadata`...) are
// dropped; the ones that ask for something this model cannot do are listed in UNSUPPORTED (mapping.ts refuses them).
import { z } from 'zod';

const nullish = <T extends z.ZodTypeAny>(t: T) => t.nullish();

/** A content part: text is read; any other part type (images, audio, files) is refused by mapping.ts. */
const contentPartSchema = z.object({ type: z.string(), text: z.string().optional() });

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPartSchema)]).nullish(),
  name: z.string().optional(),
  tool_calls: z.array(z.unknown()).nullish(),
  function_call: z.unknown().optional(),
  tool_call_id: z.string().optional(),
});
export type OpenAiChatMessage = z.infer<typeof chatMessageSchema>;

const stopSchema = nullish(z.union([z.string(), z.array(z.string()).max(4)]));

/** Sampling fields shared by chat/completions and completions. */
const samplingShape = {
  model: z.string().min(1),
  stream: nullish(z.boolean()),
  stream_options: nullish(z.object({ include_usage: z.boolean().optional() })),
  max_tokens: nullish(z.number().int().min(1)),
  temperature: nullish(z.number().min(0).max(2)),
  top_p: nullish(z.number().min(0).max(1)),
  seed: nullish(z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER)),
  stop: stopSchema,
  n: nullish(z.number().int().min(1)),
  logprobs: z.unknown().optional(),
  frequency_penalty: nullish(z.number()),
  presence_penalty: nullish(z.number()),
  logit_bias: z.unknown().optional(),
};

export const chatCompletionRequestSchema = z.object({
  ...samplingShape,
  messages: z.array(chatMessageSchema).min(1),
  max_completion_tokens: nullish(z.number().int().min(1)),
  top_logprobs: z.unknown().optional(),
  tools: z.unknown().optional(),
  tool_choice: z.unknown().optional(),
  functions: z.unknown().optional(),
  function_call: z.unknown().optional(),
  response_format: nullish(z.object({ type: z.string() }).passthrough()),
  audio: z.unknown().optional(),
  modalities: nullish(z.array(z.string())),
  prediction: z.unknown().optional(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

export const completionRequestSchema = z.object({
  ...samplingShape,
  // A list of strings is checked by mapping.ts (one prompt per request); token-id lists are refused here.
  prompt: z.union([z.string(), z.array(z.string())]),
  echo: nullish(z.boolean()),
  suffix: nullish(z.string()),
  best_of: nullish(z.number().int().min(1)),
});
export type CompletionRequest = z.infer<typeof completionRequestSchema>;

// ---- responses --------------------------------------------------------------------------------------------------

export const usageSchema = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
}).strict();
export type Usage = z.infer<typeof usageSchema>;

const finishReasonSchema = z.enum(['stop', 'length']);
export type OpenAiFinishReason = z.infer<typeof finishReasonSchema>;

export const chatCompletionSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.object({
    index: z.literal(0),
    message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }).strict(),
    finish_reason: finishReasonSchema,
    logprobs: z.null(),
  }).strict()).length(1),
  usage: usageSchema,
}).strict();
export type ChatCompletion = z.infer<typeof chatCompletionSchema>;

export const chatCompletionChunkSchema = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.object({
    index: z.literal(0),
    delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }).strict(),
    finish_reason: finishReasonSchema.nullable(),
    logprobs: z.null(),
  }).strict()).max(1),
  usage: usageSchema.nullable().optional(),
}).strict();
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;

export const completionSchema = z.object({
  id: z.string(),
  object: z.literal('text_completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.object({
    index: z.literal(0),
    text: z.string(),
    finish_reason: finishReasonSchema.nullable(),
    logprobs: z.null(),
  }).strict()).max(1),
  usage: usageSchema.nullable().optional(),
}).strict();
export type Completion = z.infer<typeof completionSchema>;

export const modelListSchema = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() }).strict()),
}).strict();
export type ModelList = z.infer<typeof modelListSchema>;

export const errorBodySchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }).strict(),
}).strict();
export type ErrorBody = z.infer<typeof errorBodySchema>;
