// Checks that a host directory holds a ChatGLM3 checkpoint before it is mounted: a wrong path otherwise surfaces
// minutes later as a Python traceback from inside the container.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ServerError } from './errors';

const FIX = 'Download THUDM/chatglm3-6b (config.json, tokenizer.model, *.safetensors or *.bin) and set the weights path to that directory.';

export async function validateWeights(dir: string): Promise<void> {
  let entries: string[];
  try {
    if (!(await stat(dir)).isDirectory()) throw new Error('not a directory');
    entries = await readdir(dir);
  } catch {
    throw new ServerError({ code: 'weights-missing', message: `The weights directory "${dir}" does not exist or cannot be read.`, fix: FIX });
  }
  const problems: string[] = [];
  if (!entries.includes('config.json')) {
    problems.push('config.json is missing');
  } else {
    const cfg = await readJson(join(dir, 'config.json'));
    if (cfg === undefined) problems.push('config.json is not valid JSON');
    else if (!isChatGlmConfig(cfg)) problems.push('config.json does not describe a ChatGLM model (model_type "chatglm")');
  }
  if (!entries.includes('tokenizer.model')) problems.push('tokenizer.model is missing');
  if (!entries.some((f) => f.endsWith('.safetensors') || (f.endsWith('.bin') && f !== 'training_args.bin'))) {
    problems.push('no weight files (*.safetensors or *.bin)');
  }
  if (problems.length) {
    throw new ServerError({
      code: 'weights-invalid',
      message: `"${dir}" is not a ChatGLM3-6B checkpoint: ${problems.join('; ')}.`,
      fix: FIX,
    });
  }
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
