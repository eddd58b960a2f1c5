// Warmup input files (<model>/warmup/<input>.bin) from triton/warmup_requests.json, byte-identical to
// triton/scripts/gen_warmup.py: strings as BYTES elements (u32 LE length + UTF-8), `history` as compact JSON,
// INT64 as 8 and FP32 as 4 little-endian bytes. One element per file (dims [1]).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeBytesTensor, encodeFp32Tensor, encodeInt32Tensor, encodeInt64Tensor } from '../triton/binaryTensor';

export { encodeBytesTensor, encodeInt32Tensor, encodeInt64Tensor, encodeFp32Tensor };

const STRING_INPUTS = ['prompt', 'history'];
const INT64_INPUTS = ['max_new_tokens', 'history_len'];
const FP32_INPUTS = ['temperature', 'top_p'];

export type WarmupRequest = Record<string, unknown>;

/** File name → bytes for every input of the warmup request; throws on unknown inputs or bad values. */
export function warmupFiles(request: WarmupRequest): Map<string, Buffer> {
  const known = new Set([...STRING_INPUTS, ...INT64_INPUTS, ...FP32_INPUTS]);
  const unknown = Object.keys(request).filter((k) => !known.has(k)).sort();
  if (unknown.length) throw new Error(`unknown warmup inputs: ${unknown.join(', ')}`);
  const files = new Map<string, Buffer>();
  for (const [name, value] of Object.entries(request)) {
    if (STRING_INPUTS.includes(name)) {
      // Compact JSON: the same bytes as Python's json.dumps(..., ensure_ascii=False, separators=(",", ":")).
      files.set(`${name}.bin`, encodeBytesTensor([typeof value === 'string' ? value : JSON.stringify(value)]));
    } else if (INT64_INPUTS.includes(name)) {
      const n = Number(value);
      if (!Number.isSafeInteger(n)) throw new Error(`warmup input ${name} must be an integer (got ${JSON.stringify(value)})`);
      files.set(`${name}.bin`, encodeInt64Tensor([n]));
    } else {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new Error(`warmup input ${name} must be a number (got ${JSON.stringify(value)})`);
      files.set(`${name}.bin`, encodeFp32Tensor([n]));
    }
  }
  return files;
}

/** Reads a warmup_requests.json file. */
export async function readWarmupRequest(path: string): Promise<WarmupRequest> {
  const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path} must hold one JSON object`);
  return parsed as WarmupRequest;
}

/** Writes the warmup files into `dir` (created if missing); returns the file names written. */
export async function writeWarmupFiles(dir: string, request: WarmupRequest): Promise<string[]> {
  const files = warmupFiles(request);
  await mkdir(dir, { recursive: true });
  for (const [name, data] of files) await writeFile(join(dir, name), data);
  return [...files.keys()].sort();
}
