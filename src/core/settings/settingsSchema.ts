// The extension's settings as data: key, default, validation, scope, whether an
// untrusted workspace may set it, and what changing it requires. package.json's contributes.configuration and
// capabilities.untrustedWorkspaces.restrictedConfigurations must agree with this table (a unit test checks).
import { DEFAULT_MODEL_ID } from '../models/catalog';
import { isModelId } from '../models/choice';
import { MAX_REPETITION_PENALTY, MIN_REPETITION_PENALTY } from '../triton/chatglm';

export const SECTION = 'tritonChatglm';

/** What a changed value needs before it takes effect. */
export type SettingEffect = 'none' | 'reloadModel' | 'restartServer' | 'reconnect';

/** `machine`: only user (or remote) settings; anything that becomes a path, a process argument or a target URL. */
export type SettingScope = 'machine' | 'window';

export type Validator<T> = (value: unknown) => value is T;

export interface SettingSpec<T> {
  default: T;
  validate: Validator<T>;
  scope: SettingScope;
  /** Not honoured from an untrusted workspace (listed in restrictedConfigurations). */
  restricted: boolean;
  effect: SettingEffect;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const intIn = (min: number, max: number): Validator<number> =>
  (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const numIn = (min: number, max: number): Validator<number> =>
  (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
const nonEmpty = (max: number): Validator<string> =>
  (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0 && v.length <= max && !/[\0\r\n]/.test(v);
const oneOf = <T extends string>(...values: T[]): Validator<T> => (v: unknown): v is T => values.includes(v as T);

const port = intIn(1, 65535);
/** Docker's own container-name rule. */
const containerName = (v: unknown): v is string => typeof v === 'string' && /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/.test(v);
/** An image reference: no spaces, no leading dash (it becomes an argument). */
const imageRef = (v: unknown): v is string => typeof v === 'string' && /^[a-zA-Z0-9][a-zA-Z0-9_.\-/:@]{0,255}$/.test(v);
const shmSize = (v: unknown): v is string => typeof v === 'string' && /^[1-9][0-9]{0,6}(\.[0-9]{1,3})?[bkmg]?$/i.test(v);
/** Host GPU indices or UUIDs (docker `--gpus device=...`); an empty list means all GPUs. */
const gpuIds = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length <= 16 && new Set(v).size === v.length &&
  v.every((g) => typeof g === 'string' && /^(\d{1,3}|GPU-[0-9a-fA-F-]{1,64}|MIG-[0-9a-zA-Z/-]{1,64})$/.test(g));
/** An absolute path or empty (not configured). Relative paths would resolve against an arbitrary cwd. */
const absolutePathOrEmpty = (v: unknown): v is string =>
  typeof v === 'string' && (v === '' || ((v.startsWith('/') || /^[A-Za-z]:[\\/]/.test(v) || v.startsWith('\\\\')) && !/[\0\r\n]/.test(v)));
const ipAddress = (v: unknown): v is string =>
  typeof v === 'string' && (/^(\d{1,3})(\.\d{1,3}){3}$/.test(v) && v.split('.').every((o) => Number(o) <= 255) || /^[0-9a-fA-F:]+$/.test(v) && v.includes(':'));
const httpUrl = (v: unknown): v is string => {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
  } catch {
    return false;
  }
};
const httpUrlOrEmpty = (v: unknown): v is string => v === '' || httpUrl(v);
/** A git branch, tag or commit as the Hub takes it in a URL: no `..`, no spaces or control characters. */
const gitRevision = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/.test(v) && !v.includes('..');
/** HTTP header names are tokens; values must not smuggle a second header line. */
const headers = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) &&
  Object.entries(v).every(([k, val]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/.test(k) && typeof val === 'string' && !/[\0\r\n]/.test(val));
const maxLen = (n: number): Validator<string> => (v: unknown): v is string => isString(v) && v.length <= n;
/** Language id → on/off (`*` for the rest). */
const languageSwitches = (v: unknown): v is Record<string, boolean> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length <= 500 &&
  Object.entries(v).every(([k, val]) => /^(\*|[A-Za-z0-9_.+#-]{1,64})$/.test(k) && typeof val === 'boolean');
const globList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length <= 200 && v.every((g) => typeof g === 'string' && g.length > 0 && g.length <= 500 && !/[\0\r\n]/.test(g));

function spec<T>(s: SettingSpec<T>): SettingSpec<T> {
  return s;
}

export const SETTINGS = {
  serverMode: spec({ default: 'managed' as 'managed' | 'external', validate: oneOf('managed', 'external'), scope: 'machine', restricted: true, effect: 'reconnect' }),
  externalUrl: spec({ default: 'http://127.0.0.1:8000', validate: httpUrl, scope: 'machine', restricted: true, effect: 'reconnect' }),
  externalHeaders: spec({ default: {} as Record<string, string>, validate: headers, scope: 'machine', restricted: true, effect: 'reconnect' }),
  /** A PEM file of the CA that signed the external server's certificate (a team proxy's self-signed one). */
  externalCaFile: spec({ default: '', validate: absolutePathOrEmpty, scope: 'machine', restricted: true, effect: 'reconnect' }),
  externalMetricsUrl: spec({ default: '', validate: httpUrlOrEmpty, scope: 'machine', restricted: true, effect: 'none' }),
  dockerPath: spec({ default: 'docker', validate: nonEmpty(1024), scope: 'machine', restricted: true, effect: 'none' }),
  image: spec({ default: 'triton-chatglm:24.10', validate: imageRef, scope: 'machine', restricted: true, effect: 'restartServer' }),
  containerName: spec({ default: 'triton-chatglm3', validate: containerName, scope: 'machine', restricted: true, effect: 'restartServer' }),
  httpPort: spec({ default: 8000, validate: port, scope: 'machine', restricted: true, effect: 'restartServer' }),
  grpcPort: spec({ default: 8001, validate: port, scope: 'machine', restricted: true, effect: 'restartServer' }),
  metricsPort: spec({ default: 8002, validate: port, scope: 'machine', restricted: true, effect: 'restartServer' }),
  bindAddress: spec({ default: '127.0.0.1', validate: ipAddress, scope: 'machine', restricted: true, effect: 'restartServer' }),
  // GPUs are chosen with `docker run --gpus`, so another set needs a new container, not just a model reload.
  // One model instance per listed GPU (its own engine and continuous scheduler); empty: all GPUs, the model on the first.
  gpus: spec({ default: [] as string[], validate: gpuIds, scope: 'machine', restricted: true, effect: 'restartServer' }),
  /** Deprecated for `gpus` (same values); still used while `gpus` is empty. */
  gpuIds: spec({ default: [] as string[], validate: gpuIds, scope: 'machine', restricted: true, effect: 'restartServer' }),
  shmSize: spec({ default: '2g', validate: shmSize, scope: 'machine', restricted: true, effect: 'restartServer' }),
  raiseUlimits: spec({ default: true, validate: isBool, scope: 'machine', restricted: true, effect: 'restartServer' }),
  /** The catalog model served (src/core/models); its weights are mounted per container, so a switch restarts it. */
  model: spec({ default: DEFAULT_MODEL_ID, validate: isModelId, scope: 'machine', restricted: true, effect: 'restartServer' }),
  weightsPath: spec({ default: '', validate: absolutePathOrEmpty, scope: 'machine', restricted: true, effect: 'restartServer' }),
  /** Download Weights: the revision of the chosen model's Hub repository, and the Hub or a mirror (empty: https://huggingface.co). */
  // Empty: the chosen model's catalog revision (a pinned commit where the catalog pins one).
  weightsRevision: spec({ default: '', validate: (v: unknown): v is string => v === '' || gitRevision(v), scope: 'machine', restricted: true, effect: 'none' }),
  hubEndpoint: spec({ default: '', validate: httpUrlOrEmpty, scope: 'machine', restricted: true, effect: 'none' }),
  autoStart: spec({ default: false, validate: isBool, scope: 'machine', restricted: true, effect: 'none' }),
  // The HF engine is test-only (triton/testing/hf_engine.py): the extension offers the native engine alone.
  engine: spec({ default: 'native' as const, validate: oneOf('native'), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  quantization: spec({ default: 'auto' as 'auto' | 'none' | 'int8', validate: oneOf('auto', 'none', 'int8'), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  maxBatchSize: spec({ default: 8, validate: intIn(1, 64), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  queueDelayMs: spec({ default: 20, validate: intIn(0, 10_000), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  maxQueueSize: spec({ default: 32, validate: intIn(1, 4096), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  /** Deprecated: copies of the model on each GPU (1 = one instance per GPU of `gpus`); still honoured. */
  instanceCount: spec({ default: 1, validate: intIn(1, 8), scope: 'machine', restricted: true, effect: 'reloadModel' }),
  streaming: spec({ default: true, validate: isBool, scope: 'machine', restricted: true, effect: 'reloadModel' }),
  temperature: spec({ default: 0.8, validate: numIn(0, 2), scope: 'window', restricted: false, effect: 'none' }),
  topP: spec({ default: 0.8, validate: numIn(0, 1), scope: 'window', restricted: false, effect: 'none' }),
  // 50 = transformers' default, which ChatGLM3's own chat() samples with; 0 = off.
  topK: spec({ default: 50, validate: intIn(0, 65_024), scope: 'window', restricted: false, effect: 'none' }),
  // 1 = off; the model accepts (0, 10] (triton/README.md).
  repetitionPenalty: spec({ default: 1, validate: numIn(MIN_REPETITION_PENALTY, MAX_REPETITION_PENALTY), scope: 'window', restricted: false, effect: 'none' }),
  maxNewTokens: spec({ default: 512, validate: intIn(1, 2048), scope: 'window', restricted: false, effect: 'none' }),
  historyTurns: spec({ default: 10, validate: intIn(0, 100), scope: 'window', restricted: false, effect: 'none' }),
  systemPrompt: spec({ default: '', validate: maxLen(8000), scope: 'window', restricted: false, effect: 'none' }),
  /** What the chat does with the active editor's file (src/core/chat/attachmentsPending.ts). */
  'chat.currentFile': spec({ default: 'suggest' as 'suggest' | 'always' | 'never', validate: oneOf('suggest', 'always', 'never'), scope: 'window', restricted: false, effect: 'none' }),
  requestTimeoutSeconds: spec({ default: 300, validate: intIn(5, 3600), scope: 'window', restricted: false, effect: 'none' }),
  streamIdleTimeoutSeconds: spec({ default: 60, validate: intIn(5, 3600), scope: 'window', restricted: false, effect: 'none' }),
  explainMaxConcurrency: spec({ default: 8, validate: intIn(1, 64), scope: 'window', restricted: false, effect: 'none' }),
  explainMaxSelectionChars: spec({ default: 8000, validate: intIn(200, 100_000), scope: 'window', restricted: false, effect: 'none' }),
  /** Where Explain Selection answers: comment threads beside the code, or one chat message per selection. */
  'explain.target': spec({ default: 'comments' as 'comments' | 'chat', validate: oneOf('comments', 'chat'), scope: 'window', restricted: false, effect: 'none' }),
  /** Unload Model, Stop Server and Restart Server ask first while the model is loaded ("Don't Ask Again" clears it). */
  /** The OpenAI-compatible endpoint (src/core/openai) on 127.0.0.1 while the window is open; off by default. */
  'openai.enabled': spec({ default: false, validate: isBool, scope: 'machine', restricted: true, effect: 'none' }),
  'openai.port': spec({ default: 8003, validate: port, scope: 'machine', restricted: true, effect: 'none' }),
  /** Inline code completion (src/core/completion): on with a fill-in-the-middle model, per language, debounced. */
  'completions.enabled': spec({ default: true, validate: isBool, scope: 'window', restricted: false, effect: 'none' }),
  'completions.languages': spec({
    default: { '*': true, plaintext: false, markdown: false, scminput: false } as Record<string, boolean>,
    validate: languageSwitches, scope: 'window', restricted: false, effect: 'none',
  }),
  'completions.debounceMs': spec({ default: 250, validate: intIn(0, 5000), scope: 'window', restricted: false, effect: 'none' }),
  'completions.exclude': spec({ default: [] as string[], validate: globList, scope: 'window', restricted: false, effect: 'none' }),
  'completions.maxLineTokens': spec({ default: 64, validate: intIn(1, 512), scope: 'window', restricted: false, effect: 'none' }),
  'completions.maxBlockTokens': spec({ default: 256, validate: intIn(1, 2048), scope: 'window', restricted: false, effect: 'none' }),
  askBeforeUnload: spec({ default: true, validate: isBool, scope: 'window', restricted: false, effect: 'none' }),
} as const;

export type SettingKey = keyof typeof SETTINGS;

/** Settings kept working for old configurations, with the one that replaces each (reported when set). */
export const DEPRECATED_SETTINGS: Readonly<Partial<Record<SettingKey, SettingKey>>> = { gpuIds: 'gpus', instanceCount: 'gpus' };
export type ExtensionSettings = { -readonly [K in SettingKey]: (typeof SETTINGS)[K]['default'] };
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export function restrictedKeys(): string[] {
  return SETTING_KEYS.filter((k) => SETTINGS[k].restricted).map((k) => `${SECTION}.${k}`);
}
