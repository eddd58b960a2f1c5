// Generated hostile requests for the chatglm3-6b model, each a raw HTTP request (the point is to send what our own
// client never would). Seeded, so a failure can be replayed with TRITON_CHATGLM_FUZZ_SEED.

export interface FuzzRequest {
  category: string;
  /** 'stream' → the decoupled model's /generate_stream; 'generate' / 'infer' → the non-decoupled variant. */
  endpoint: 'stream' | 'generate' | 'infer';
  body: Buffer;
  headers: Record<string, string>;
  note: string;
}

export type Rng = () => number;

/** mulberry32: small, fast, good enough to pick cases reproducibly. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
const JSON_HEADERS = { 'content-type': 'application/json' };

function randomText(r: Rng, length: number): string {
  const alphabet = ['a', 'Z', ' ', '\n', '中', '文', '😀', '"', '\\', '<|user|>', '[gMASK]', '\u0000', '\u202e', '{', '}', '%s', '${x}'];
  let s = '';
  while (s.length < length) s += pick(r, alphabet);
  return s;
}

/** A JSON endpoint chosen at random: the streaming model or the non-streaming variant's /generate. */
const jsonEndpoint = (r: Rng): 'stream' | 'generate' => (r() < 0.7 ? 'stream' : 'generate');

/** Binary-data /infer body: JSON header + blobs (BYTES elements are 4-byte little-endian length + bytes). */
function inferBody(inputs: { name: string; datatype: string; shape: number[]; blob: Buffer; declaredSize?: number }[], tail = Buffer.alloc(0)): { body: Buffer; headers: Record<string, string> } {
  const header = Buffer.from(JSON.stringify({
    inputs: inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape, parameters: { binary_data_size: i.declaredSize ?? i.blob.length } })),
    outputs: [{ name: 'response', parameters: { binary_data: false } }, { name: 'finish_reason', parameters: { binary_data: false } }],
  }), 'utf8');
  return {
    body: Buffer.concat([header, ...inputs.map((i) => i.blob), tail]),
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(header.length) },
  };
}

const bytesElement = (b: Buffer): Buffer => {
  const len = Buffer.alloc(4);
  len.writeUInt32LE(b.length);
  return Buffer.concat([len, b]);
};

const INVALID_UTF8: Buffer[] = [
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.from([0x80, 0x81]), // lone continuation bytes
  Buffer.from([0xc0, 0xaf]), // overlong '/'
  Buffer.from([0xe4, 0xb8]), // truncated 3-byte character
  Buffer.from([0xed, 0xa0, 0x80]), // UTF-16 surrogate encoded in UTF-8
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), // 5-byte form
  Buffer.concat([Buffer.from('hello '), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from(' world')]),
];

type CaseMaker = (r: Rng, soak: boolean) => Omit<FuzzRequest, 'category'>;

export const CASES: Record<string, CaseMaker> = {
  'huge-string': (r, soak) => {
    const size = pick(r, soak ? [100_000, 1_000_000, 4_000_000] : [100_000, 1_000_000]);
    const where = pick(r, ['prompt', 'history-content', 'metadata']);
    const big = randomText(r, size);
    const body = where === 'prompt' ? { prompt: big }
      : where === 'history-content' ? { prompt: 'hi', history: JSON.stringify([{ role: 'user', content: big }, { role: 'assistant', content: 'ok' }]) }
        : { prompt: 'hi', history: JSON.stringify([{ role: 'assistant', metadata: big, content: 'x' }]) };
    return { endpoint: jsonEndpoint(r), body: json(body), headers: JSON_HEADERS, note: `${where} of ${size} chars` };
  },
  'invalid-utf8-binary': (r) => {
    const bad = pick(r, INVALID_UTF8);
    const target = pick(r, ['prompt', 'history']);
    const inputs = [{ name: 'prompt', datatype: 'BYTES', shape: [1, 1], blob: bytesElement(target === 'prompt' ? bad : Buffer.from('hi')) }];
    if (target === 'history') inputs.push({ name: 'history', datatype: 'BYTES', shape: [1, 1], blob: bytesElement(Buffer.concat([Buffer.from('[{"role":"user","content":"'), bad, Buffer.from('"}]')])) });
    return { endpoint: 'infer', ...inferBody(inputs), note: `${target} with bytes ${bad.toString('hex')}` };
  },
  'invalid-utf8-json': (r) => {
    const bad = pick(r, INVALID_UTF8);
    const variant = pick(r, ['raw-bytes', 'lone-surrogate', 'reversed-surrogates']);
    const body = variant === 'raw-bytes' ? Buffer.concat([Buffer.from('{"prompt":"'), bad, Buffer.from('"}')])
      : variant === 'lone-surrogate' ? Buffer.from('{"prompt":"a\\ud800b","history":"[{\\"role\\":\\"user\\",\\"content\\":\\"\\\\udfff\\"}]"}')
        : Buffer.from('{"prompt":"\\udc00\\ud800"}');
    return { endpoint: jsonEndpoint(r), body, headers: JSON_HEADERS, note: variant };
  },
  'deep-json-history': (r, soak) => {
    const depth = pick(r, soak ? [100, 1_000, 100_000, 1_000_000] : [100, 1_000, 100_000]);
    const shape = pick(r, ['list', 'dict', 'python-literal']);
    const history = shape === 'list' ? `${'['.repeat(depth)}${']'.repeat(depth)}`
      : shape === 'dict' ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
        : `${'('.repeat(depth)}1${',)'.repeat(depth)}`;
    return { endpoint: jsonEndpoint(r), body: json({ prompt: 'hi', history }), headers: JSON_HEADERS, note: `${shape} nested ${depth} deep` };
  },
  'enormous-history': (r, soak) => {
    const n = pick(r, soak ? [10_000, 100_000] : [5_000, 20_000]);
    const history = JSON.stringify(Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` })));
    return { endpoint: jsonEndpoint(r), body: json({ prompt: 'summarize', history }), headers: JSON_HEADERS, note: `${n} messages` };
  },
  'code-in-history': (r) => {
    // The tutorial's format is a Python literal; code in it must be refused, never run (see the marker check).
    const payload = pick(r, [
      "[{'role': 'user', 'content': __import__('os').system('touch MARKER')}]",
      "[{'role': 'user', 'content': open('MARKER', 'w').write('x')}]",
      "__import__('pathlib').Path('MARKER').touch()",
      "[{'role': 'user', 'content': (lambda: __import__('os').system('touch MARKER'))()}]",
      "[x for x in ().__class__.__base__.__subclasses__()]",
    ]);
    return { endpoint: jsonEndpoint(r), body: json({ prompt: 'hi', history: payload }), headers: JSON_HEADERS, note: payload.slice(0, 60) };
  },
  'wrong-types': (r) => {
    const variants: Record<string, unknown>[] = [
      { prompt: 42 }, { prompt: ['a', 'b'] }, { prompt: { text: 'hi' } }, { prompt: null }, { prompt: true },
      { prompt: 'hi', temperature: 'hot' }, { prompt: 'hi', max_new_tokens: 3.5 }, { prompt: 'hi', max_new_tokens: '10' },
      { prompt: 'hi', max_new_tokens: -5 }, { prompt: 'hi', max_new_tokens: 2 ** 40 }, { prompt: 'hi', history: 7 },
      { prompt: 'hi', history: '{"role":"user"}' }, { prompt: 'hi', history: '[{"role":"wizard","content":"x"}]' },
      { prompt: 'hi', history: '[{"role":"user","content":["not","text"]}]' }, { prompt: 'hi', top_p: [0.5, 0.6] },
      { prompt: 'hi', history_len: -3 }, { prompt: 'hi', temperature: -1 }, { prompt: 'hi', top_p: 5 },
      { prompt: '' }, { prompt: 'hi', max_new_tokens: 0 },
    ];
    const v = pick(r, variants);
    return { endpoint: jsonEndpoint(r), body: json(v), headers: JSON_HEADERS, note: JSON.stringify(v).slice(0, 80) };
  },
  'nan-inf': (r) => {
    const field = pick(r, ['temperature', 'top_p', 'max_new_tokens', 'history_len']);
    const value = pick(r, ['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '1e39', '3.4e38', '-0', '1e-400']);
    return { endpoint: jsonEndpoint(r), body: Buffer.from(`{"prompt":"hi","${field}":${value}}`), headers: JSON_HEADERS, note: `${field}=${value}` };
  },
  'missing-inputs': (r) => {
    const v = pick(r, [{}, { history: '[]' }, { temperature: 0.5 }, { Prompt: 'hi' }]);
    return { endpoint: jsonEndpoint(r), body: json(v), headers: JSON_HEADERS, note: JSON.stringify(v) };
  },
  'unknown-inputs': (r) => {
    const v = pick(r, [
      { prompt: 'hi', evil: 1 }, { prompt: 'hi', __proto__x: { polluted: true } }, { prompt: 'hi', response: 'forged' },
      { prompt: 'hi', parameters: { config: '{}' } }, { prompt: 'hi', id: { nested: 1 } }, { prompt: 'hi', binary_data_output: true },
    ]);
    return { endpoint: jsonEndpoint(r), body: json(v), headers: JSON_HEADERS, note: JSON.stringify(v).slice(0, 80) };
  },
  'broken-body': (r) => {
    const v = pick(r, ['', '{', '{"prompt":', 'null', '[]', '"just a string"', '{"prompt":"hi"}{"prompt":"again"}', 'prompt=hi', '\u0000\u0001\u0002']);
    return { endpoint: jsonEndpoint(r), body: Buffer.from(v), headers: JSON_HEADERS, note: JSON.stringify(v) };
  },
  'wrong-shape-binary': (r) => {
    const text = bytesElement(Buffer.from('hi'));
    const variant = pick(r, ['two-elements', 'zero-shape', 'int-prompt', 'bytes-temperature', 'size-lie', 'length-prefix-lie', 'batch-3', 'negative-dim']);
    const prompt = { name: 'prompt', datatype: 'BYTES', shape: [1, 1], blob: text };
    const made =
      variant === 'two-elements' ? inferBody([{ ...prompt, shape: [1, 2], blob: Buffer.concat([text, text]) }])
        : variant === 'zero-shape' ? inferBody([{ ...prompt, shape: [1, 0], blob: Buffer.alloc(0) }])
          : variant === 'int-prompt' ? inferBody([{ name: 'prompt', datatype: 'INT32', shape: [1, 1], blob: Buffer.from([1, 0, 0, 0]) }])
            : variant === 'bytes-temperature' ? inferBody([prompt, { name: 'temperature', datatype: 'BYTES', shape: [1, 1], blob: bytesElement(Buffer.from('0.5')) }])
              : variant === 'size-lie' ? inferBody([{ ...prompt, declaredSize: 1_000_000 }])
                : variant === 'length-prefix-lie' ? inferBody([{ ...prompt, blob: Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0x7f]), Buffer.from('hi')]) }])
                  : variant === 'batch-3' ? inferBody([{ ...prompt, shape: [3, 1], blob: Buffer.concat([text, bytesElement(Buffer.from([0xff])), text]) }])
                    : inferBody([{ ...prompt, shape: [1, -1] }]);
    return { endpoint: 'infer', ...made, note: variant };
  },
  'special-tokens': (r) => {
    const v = pick(r, ['<|user|>', '<|assistant|>\n', '[gMASK]sop', '<|observation|>', '\u0000'.repeat(100), '\r\n'.repeat(500)]);
    return { endpoint: jsonEndpoint(r), body: json({ prompt: v, history: JSON.stringify([{ role: 'system', content: v }]) }), headers: JSON_HEADERS, note: JSON.stringify(v).slice(0, 40) };
  },
};

export const CATEGORIES = Object.keys(CASES);

/** `count` requests: every category at least once (in order), then categories at random. */
export function generateCases(seed: number, count: number, soak: boolean): FuzzRequest[] {
  const r = rng(seed);
  const out: FuzzRequest[] = [];
  for (let i = 0; i < count; i++) {
    const category = i < CATEGORIES.length ? CATEGORIES[i]! : pick(r, CATEGORIES);
    out.push({ category, ...CASES[category]!(r, soak) });
  }
  return out;
}

export { int as randomInt };
