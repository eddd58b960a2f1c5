// Which ChatGLM model VS Code's language model picker (and any extension using `vscode.lm`) is offered, and with
// what limits: only one the server can answer with now (the model loaded), or, when the user lets the extension
// start ChatGLM on its own (`autoStart`), one it can start (managed mode, setup complete or a server up). The
// limits are the server's own: the model config's parameters, or the ones the extension renders when no server
// can be asked yet.
import { z } from 'zod';
import { chosenModel, loadedModelEntry, modelEntryName } from '../models/choice';
import { DEFAULT_MODEL_SETTINGS } from '../repository';
import { canInfer, type LifecycleState } from '../state/lifecycle';

/** The `vendor` of contributes.languageModelChatProviders and of `vscode.lm.selectChatModels`. */
export const LM_VENDOR = 'triton-chatglm';
export const LM_FAMILY = 'chatglm3';
export const LM_DISPLAY_NAME = 'ChatGLM3-6B';

/** `ready`: answers now; `startable`: a request starts the server or loads the model first (autoStart). */
export type LmAvailability = 'ready' | 'startable' | 'none';

export interface AvailabilityInput {
  state: LifecycleState;
  autoStart: boolean;
  /** The last setup check passed (undefined: none ran yet). */
  setupOk: boolean | undefined;
}

export function chatModelAvailability({ state, autoStart, setupOk }: AvailabilityInput): LmAvailability {
  if (canInfer(state)) return 'ready';
  if (!autoStart || state.mode !== 'managed') return 'none';
  // On its way already (a start or load someone asked for): a request waits for it.
  if (state.server === 'starting' || (state.server === 'running' && state.model === 'loading')) return 'startable';
  if (state.server === 'running' && state.model === 'unloaded') return 'startable';
  if (state.server === 'stopped' && setupOk === true) return 'startable';
  return 'none';
}

export interface ServerLimits {
  /** Prompt + history + system prompt, in tokens (the server trims history beyond it). */
  maxInputTokens: number;
  /** What the server clamps a request's max_new_tokens to. */
  maxOutputTokens: number;
}

/** What the extension renders into config.pbtxt (renderConfig.ts): the limits of a server it starts. */
export const RENDERED_LIMITS: Readonly<ServerLimits> = Object.freeze({
  maxInputTokens: DEFAULT_MODEL_SETTINGS.maxInputTokens,
  maxOutputTokens: DEFAULT_MODEL_SETTINGS.maxNewTokensLimit,
});

const positiveInt = z.string().regex(/^\d{1,9}$/).transform(Number).pipe(z.number().int().min(1));
/** One parameter of a Triton model config: `{"string_value": "6144"}`. */
const intParameter = z.object({ string_value: positiveInt });

/**
 * The limits in a model config as Triton returns it (GET /v2/models/<model>/config). A parameter that is missing
 * or malformed keeps the rendered default, so an external server with an older config still gets a budget.
 */
export function serverLimitsFromConfig(config: unknown): ServerLimits {
  const parameters = typeof config === 'object' && config !== null && 'parameters' in config ? config.parameters : undefined;
  const read = (name: string, fallback: number) => {
    const raw = typeof parameters === 'object' && parameters !== null ? (parameters as Record<string, unknown>)[name] : undefined;
    const parsed = intParameter.safeParse(raw);
    return parsed.success ? parsed.data.string_value : fallback;
  };
  return {
    maxInputTokens: read('max_input_tokens', RENDERED_LIMITS.maxInputTokens),
    maxOutputTokens: read('max_new_tokens_limit', RENDERED_LIMITS.maxOutputTokens),
  };
}

/** The facts a model's tooltip is worded from (the front end words and localizes them). */
export interface ChatModelFacts {
  availability: Exclude<LmAvailability, 'none'>;
  limits: ServerLimits;
  /** The Triton server's URL (undefined while none runs). */
  serverUrl: string | undefined;
  /** Names of the GPUs the server runs on, when known (nvidia-smi in the setup checks). */
  gpus: readonly string[];
  /** Triton's name of the model that answers (the session's modelName); the default model when absent. */
  modelName?: string;
}

export interface ChatModelInfo {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: { toolCalling: false; imageInput: false };
}

/** The model as VS Code lists it: ChatGLM3 takes text only and has no tool calling here. */
export function chatModelInfo(facts: ChatModelFacts): ChatModelInfo {
  const name = facts.modelName ?? modelEntryName(chosenModel(undefined));
  return {
    id: name,
    name: loadedModelEntry([name])?.displayName ?? LM_DISPLAY_NAME,
    family: LM_FAMILY,
    version: name,
    maxInputTokens: facts.limits.maxInputTokens,
    maxOutputTokens: facts.limits.maxOutputTokens,
    capabilities: { toolCalling: false, imageInput: false },
  };
}

/** The GPUs the setup checks found for the server (names, as nvidia-smi gives them), or none when not known. */
export function gpuNames(report: { checks: readonly { id: string; facts?: { gpus?: readonly { name: string }[] } }[] } | undefined): string[] {
  const check = report?.checks.find((c) => c.id === 'gpu-memory');
  return (check?.facts?.gpus ?? []).map((g) => g.name);
}
