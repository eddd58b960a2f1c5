// The model catalog: ChatGLM3-6B, GLM-4-9B-Chat, CodeGeeX4-ALL-9B. One data file, read here (bundled by esbuild)
// and by the engine in the model repository (triton/model_repository/chatglm3-6b/1/chatglm/catalog.json beside
// the Python package that reads it, chatglm/catalog.py), so both sides see the same repository, revision, files,
// tokenizer, prompt layout, stop ids, config and licence of each model. Validated when this module loads.
import { z } from 'zod';
import catalogJson from '../../../triton/model_repository/chatglm3-6b/1/chatglm/catalog.json';

const ROLES = ['system', 'user', 'assistant', 'observation'] as const;
const positiveInt = z.number().int().positive();

const configSchema = z.object({
  num_layers: positiveInt,
  hidden_size: positiveInt,
  num_attention_heads: positiveInt,
  kv_channels: positiveInt,
  multi_query_group_num: positiveInt,
  ffn_hidden_size: positiveInt,
  padded_vocab_size: positiveInt,
  add_qkv_bias: z.boolean(),
  post_layer_norm: z.boolean(),
  seq_length: positiveInt,
  rope_ratio: z.number().positive(),
  layernorm_epsilon: z.number().positive().lt(1),
}).strict();

const modelSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9.-]*$/),
  displayName: z.string().min(1),
  hub: z.object({
    repo: z.string().regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/),
    aliases: z.array(z.string()),
    /** A branch, or a pinned commit (40 hex digits). */
    revision: z.string().min(1),
    testedCommit: z.string().regex(/^[0-9a-f]{40}$/).nullable(),
    revisionNote: z.string(),
  }).strict(),
  files: z.object({
    required: z.array(z.string()).min(1),
    optional: z.array(z.string()),
    weights: z.array(z.enum(['safetensors', 'bin'])).min(1),
  }).strict(),
  downloadBytes: positiveInt.nullable(),
  tokenizer: z.enum(['sentencepiece', 'tiktoken']),
  prompt: z.object({
    prefix: z.array(z.string()).min(1),
    roles: z.object({ system: z.string(), user: z.string(), assistant: z.string(), observation: z.string() }).strict(),
    message: z.array(z.string()),
    generation: z.string(),
  }).strict(),
  specialTokenIds: z.record(z.number().int().nonnegative()),
  stopIds: z.array(z.number().int().nonnegative()).min(1),
  fillInMiddle: z.boolean(),
  config: configSchema,
  weightsDtype: z.enum(['float16', 'bfloat16']),
  scores: z.object({ humanEval: z.number().nullable(), humanEvalFim: z.number().nullable(), source: z.string().url() }).strict(),
  license: z.object({
    name: z.string().min(1),
    url: z.string().url(),
    commercialUse: z.enum(['allowed', 'after-registration', 'not-allowed']),
    registrationUrl: z.string().url().nullable(),
    keyTerms: z.object({ en: z.string().min(1), 'zh-cn': z.string().min(1) }).strict(),
  }).strict(),
}).strict().superRefine((m, ctx) => {
  // Every token the layout names has an id, and the stop ids are eos, <|user|>, <|observation|> (as the engine's).
  for (const name of [...m.prompt.prefix, ...ROLES.map((r) => m.prompt.roles[r]), m.prompt.generation, 'eos']) {
    if (m.specialTokenIds[name] === undefined) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${m.id}: no id for ${name}` });
  }
  const stops = [m.specialTokenIds.eos, m.specialTokenIds[m.prompt.roles.user], m.specialTokenIds[m.prompt.roles.observation]];
  if (stops.join() !== m.stopIds.join()) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${m.id}: stopIds must be ${stops.join(', ')}` });
});

export const catalogSchema = z.object({ version: z.literal(1), default: z.string(), models: z.array(modelSchema).min(1) })
  .strict()
  .refine((c) => new Set(c.models.map((m) => m.id)).size === c.models.length, 'model ids must be unique')
  .refine((c) => c.models.some((m) => m.id === c.default), 'the default must be a model of the catalog');

export type ModelCatalog = z.infer<typeof catalogSchema>;
export type CatalogModel = ModelCatalog['models'][number];
export type CatalogModelConfig = CatalogModel['config'];

/** The committed catalog, validated (a malformed file fails at load, naming the entry and field). */
export const MODEL_CATALOG: ModelCatalog = catalogSchema.parse(catalogJson);

export const DEFAULT_MODEL_ID: string = MODEL_CATALOG.default;

export function catalogModel(id: string): CatalogModel | undefined {
  return MODEL_CATALOG.models.find((m) => m.id === id);
}

/** Whether a revision is a pinned commit rather than a branch. */
export function isPinnedCommit(revision: string): boolean {
  return /^[0-9a-f]{40}$/.test(revision);
}

/** KV cache bytes per token of context at 2 bytes an element (keys and values of every layer's groups). */
export function kvBytesPerToken(config: CatalogModelConfig, elementBytes = 2): number {
  return 2 * config.num_layers * config.multi_query_group_num * config.kv_channels * elementBytes;
}
