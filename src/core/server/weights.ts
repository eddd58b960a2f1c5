// Checks that a host directory holds a checkpoint of the chosen model before it is mounted: a wrong path (or the
// folder of another model) otherwise surfaces minutes later as a Python traceback from inside the container.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { chosenModel } from '../models/choice';
import type { CatalogModel } from '../models/catalog';
import { checkpointServes, checkpointTitle, identifyCheckpoint } from '../models/checkpointModel';
import { checkCompleteness } from '../weights/downloadManifest';
import { ServerError } from './errors';

/** What to do about a folder that is not the chosen model's checkpoint. */
export function weightsFix(model: Pick<CatalogModel, 'displayName' | 'hub'>): string {
  return `Download ${model.displayName} (${model.hub.repo}: config.json, tokenizer.model, the weight files) or set the weights path to a folder that holds it.`;
}

/** What a checkpoint folder lacks, as codes the front ends word (the English text is built from them). */
export type WeightsProblem = 'no-config' | 'config-unreadable' | 'not-chatglm' | 'other-model' | 'no-tokenizer' | 'no-weight-files' | 'download-incomplete' | 'files-missing';

const PROBLEM_TEXT: Record<WeightsProblem, string> = {
  'no-config': 'config.json is missing',
  'config-unreadable': 'config.json is not valid JSON',
  'not-chatglm': 'config.json does not describe a ChatGLM model (model_type "chatglm")',
  'other-model': 'it holds another model',
  'no-tokenizer': 'tokenizer.model is missing',
  'no-weight-files': 'no weight files (*.safetensors or *.bin)',
  'download-incomplete': 'its download has not finished (download again to resume)',
  'files-missing': 'files its weight index or download manifest names are missing',
};

/**
 * A folder that is not a checkpoint of the chosen model: which parts are missing (`problems`), with the path.
 * `holds`: the catalog model(s) its config.json describes when that is another one (problem `other-model`).
 */
export class WeightsError extends ServerError {
  readonly chosen: string;
  constructor(readonly path: string, readonly problems: readonly WeightsProblem[], model: Pick<CatalogModel, 'displayName' | 'hub'> = chosenModel(undefined), readonly holds?: string) {
    const text = problems.map((p) => (p === 'other-model' ? (holds ? `it holds ${holds}` : 'its config.json describes a model shape the catalog does not list') : PROBLEM_TEXT[p]));
    super({ code: 'weights-invalid', message: `"${path}" is not a ${model.displayName} checkpoint: ${text.join('; ')}.`, fix: weightsFix(model) });
    this.chosen = model.displayName;
  }
}

/** Checks `dir` holds a whole checkpoint of `model` (the catalog's default when not given). */
export async function validateWeights(dir: string, model: CatalogModel = chosenModel(undefined)): Promise<void> {
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error('not a directory');
    entries = await readdir(dir);
  } catch {
    throw new ServerError({ code: 'weights-missing', message: `The weights directory "${dir}" does not exist or cannot be read.`, fix: weightsFix(model) });
  }
  // A folder we are still downloading says so, whatever it already holds; any folder's index must find its shards.
  const whole = await checkCompleteness(dir);
  if (!whole.complete && whole.problem === 'download-incomplete') throw new WeightsError(dir, ['download-incomplete'], model);
  const problems: WeightsProblem[] = [];
  let holds: string | undefined;
  if (!entries.includes('config.json')) {
    problems.push('no-config');
  } else {
    const cfg = await readJson(join(dir, 'config.json'));
    if (cfg === undefined) problems.push('config-unreadable');
    else if (!isChatGlmConfig(cfg)) problems.push('not-chatglm');
    else {
      const identity = identifyCheckpoint(cfg);
      if (!checkpointServes(identity, model)) {
        problems.push('other-model');
        holds = checkpointTitle(identity);
      }
    }
  }
  if (!entries.includes('tokenizer.model')) problems.push('no-tokenizer');
  if (!entries.some((f) => f.endsWith('.safetensors') || (f.endsWith('.bin') && f !== 'training_args.bin'))) problems.push('no-weight-files');
  if (!whole.complete) problems.push(whole.problem);
  if (problems.length) throw new WeightsError(dir, problems, model, holds);
}

function isChatGlmConfig(cfg: unknown): boolean {
  if (typeof cfg !== 'object' || cfg === null) return false;
  const c = cfg as { model_type?: unknown; architectures?: unknown };
  if (c.model_type === 'chatglm') return true;
  return Array.isArray(c.architectures) && c.architectures.some((a) => typeof a === 'string' && a.startsWith('ChatGLM'));
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The checkpoint a chosen folder holds: the folder itself, or its only sub-folder that is one (people often pick
 * the download folder one level up). Throws the folder's own problem otherwise.
 */
export async function locateWeights(dir: string, model: CatalogModel = chosenModel(undefined)): Promise<string> {
  let problem: unknown;
  try {
    await validateWeights(dir, model);
    return dir;
  } catch (e) {
    problem = e;
  }
  const subdirs = await readdir(dir, { withFileTypes: true }).then((entries) => entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name)), () => []);
  const found: string[] = [];
  for (const sub of subdirs.slice(0, 50)) {
    if (await validateWeights(sub, model).then(() => true, () => false)) found.push(sub);
  }
  if (found.length === 1) return found[0]!;
  throw problem;
}
