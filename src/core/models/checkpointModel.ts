// Which catalog model a checkpoint's config.json describes. The exact shape (every field of the catalog's
// `config`) names one model; a checkpoint of another size but the same architecture (rotary base, attention groups,
// biases: a fine-tune, a pruned or a test checkpoint) is taken for any model of that architecture, as the engine
// loads it; anything else (another rotary base, transformers' own GLM layout, not a ChatGLM config) is unknown.
import { MODEL_CATALOG, type CatalogModel, type CatalogModelConfig } from './catalog';

export type CheckpointIdentity =
  /** The exact shape of one catalog model. */
  | { kind: 'model'; model: CatalogModel }
  /** Another size of an architecture the catalog has: the models it may stand for. */
  | { kind: 'family'; models: CatalogModel[] }
  /** Not a ChatGLM config, or a ChatGLM architecture no catalog model has. */
  | { kind: 'unknown' };

type Fields = { [K in keyof CatalogModelConfig]?: unknown };

/** The config's fields under the catalog's names (GLM-4 also writes num_hidden_layers; rope_ratio absent = 1). */
function readFields(config: Record<string, unknown>): Fields {
  return {
    ...config,
    num_layers: config.num_layers ?? config.num_hidden_layers,
    rope_ratio: config.rope_ratio ?? 1,
  };
}

function isChatGlmConfig(cfg: Record<string, unknown>): boolean {
  if (cfg.model_type === 'chatglm') return true;
  return Array.isArray(cfg.architectures) && cfg.architectures.some((a) => typeof a === 'string' && a.startsWith('ChatGLM'));
}

/** What makes two checkpoints the same architecture whatever their size (the engine branches on nothing else). */
const ARCHITECTURE: ReadonlyArray<keyof CatalogModelConfig> = ['rope_ratio', 'add_qkv_bias', 'post_layer_norm'];

export function identifyCheckpoint(config: unknown): CheckpointIdentity {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { kind: 'unknown' };
  const raw = config as Record<string, unknown>;
  if (!isChatGlmConfig(raw)) return { kind: 'unknown' };
  const fields = readFields(raw);
  const exact = MODEL_CATALOG.models.find((m) => (Object.keys(m.config) as (keyof CatalogModelConfig)[]).every((k) => fields[k] === m.config[k]));
  if (exact) return { kind: 'model', model: exact };
  const family = MODEL_CATALOG.models.filter((m) => ARCHITECTURE.every((k) => fields[k] === m.config[k]));
  return family.length ? { kind: 'family', models: family } : { kind: 'unknown' };
}

/** Whether a checkpoint of this identity serves the model. */
export function checkpointServes(identity: CheckpointIdentity, model: Pick<CatalogModel, 'id'>): boolean {
  if (identity.kind === 'model') return identity.model.id === model.id;
  if (identity.kind === 'family') return identity.models.some((m) => m.id === model.id);
  return false;
}

/** The display name of what a checkpoint holds ("GLM-4-9B-Chat"), or undefined for an unknown one. */
export function checkpointTitle(identity: CheckpointIdentity): string | undefined {
  if (identity.kind === 'model') return identity.model.displayName;
  if (identity.kind === 'family') return identity.models.map((m) => m.displayName).join(' / ');
  return undefined;
}
