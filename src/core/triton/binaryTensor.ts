// Triton's binary tensor format (binary-data extension, warmup input_data_file, pb_utils.serialize_byte_tensor):
// little-endian, row-major, no padding; a BYTES element is a uint32 LE length followed by its bytes.

export type TritonDatatype =
  | 'BOOL' | 'UINT8' | 'UINT16' | 'UINT32' | 'UINT64' | 'INT8' | 'INT16' | 'INT32' | 'INT64'
  | 'FP16' | 'FP32' | 'FP64' | 'BF16' | 'BYTES';

/** Element values of a decoded tensor: strings for BYTES, booleans for BOOL, numbers (bigint for 64-bit ints). */
export type TensorValue = string | number | boolean | bigint;

/** BYTES tensor: for each string, u32 LE byte length + UTF-8 bytes ("233" → 03 00 00 00 32 33 33). */
export function encodeBytesTensor(elements: readonly (string | Uint8Array)[]): Buffer {
  const parts: Buffer[] = [];
  for (const el of elements) {
    const bytes = typeof el === 'string' ? Buffer.from(el, 'utf8') : Buffer.from(el);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(bytes.length, 0);
    parts.push(len, bytes);
  }
  return Buffer.concat(parts);
}

/** Splits a BYTES tensor into its raw elements; throws on truncated data. */
export function decodeBytesTensorRaw(data: Uint8Array): Buffer[] {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out: Buffer[] = [];
  let off = 0;
  while (off < buf.length) {
    if (off + 4 > buf.length) throw new Error(`BYTES tensor truncated: ${buf.length - off} byte(s) where a 4-byte length was expected`);
    const len = buf.readUInt32LE(off);
    off += 4;
    if (off + len > buf.length) throw new Error(`BYTES tensor truncated: element of ${len} bytes but only ${buf.length - off} left`);
    out.push(buf.subarray(off, off + len));
    off += len;
  }
  return out;
}

/** Decodes a BYTES tensor as UTF-8 strings. */
export function decodeBytesTensor(data: Uint8Array): string[] {
  return decodeBytesTensorRaw(data).map((b) => b.toString('utf8'));
}

export function encodeInt32Tensor(values: readonly number[]): Buffer {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => {
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new RangeError(`not an INT32 value: ${v}`);
    buf.writeInt32LE(v, i * 4);
  });
  return buf;
}

/** INT64 elements from safe integers (what JSON numbers can hold exactly). */
export function encodeInt64Tensor(values: readonly number[]): Buffer {
  const buf = Buffer.alloc(values.length * 8);
  values.forEach((v, i) => {
    if (!Number.isSafeInteger(v)) throw new RangeError(`not an INT64 value that a number holds exactly: ${v}`);
    buf.writeBigInt64LE(BigInt(v), i * 8);
  });
  return buf;
}

export function encodeFp32Tensor(values: readonly number[]): Buffer {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf;
}

const FIXED_SIZE: Partial<Record<TritonDatatype, number>> = {
  BOOL: 1, UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, FP16: 2, BF16: 2, UINT32: 4, INT32: 4, FP32: 4,
  UINT64: 8, INT64: 8, FP64: 8,
};

/** Encodes any tensor for the binary-data extension. */
export function encodeTensor(datatype: TritonDatatype, data: readonly TensorValue[]): Buffer {
  if (datatype === 'BYTES') return encodeBytesTensor(data.map(String));
  const size = FIXED_SIZE[datatype];
  if (!size || datatype === 'FP16' || datatype === 'BF16') throw new Error(`binary encoding of ${datatype} is not supported`);
  const buf = Buffer.alloc(data.length * size);
  data.forEach((raw, i) => {
    const o = i * size;
    switch (datatype) {
      case 'BOOL': buf.writeUInt8(raw ? 1 : 0, o); break;
      case 'UINT8': buf.writeUInt8(Number(raw), o); break;
      case 'INT8': buf.writeInt8(Number(raw), o); break;
      case 'UINT16': buf.writeUInt16LE(Number(raw), o); break;
      case 'INT16': buf.writeInt16LE(Number(raw), o); break;
      case 'UINT32': buf.writeUInt32LE(Number(raw), o); break;
      case 'INT32': buf.writeInt32LE(Number(raw), o); break;
      case 'FP32': buf.writeFloatLE(Number(raw), o); break;
      case 'FP64': buf.writeDoubleLE(Number(raw), o); break;
      case 'UINT64': buf.writeBigUInt64LE(BigInt(raw), o); break;
      case 'INT64': buf.writeBigInt64LE(BigInt(raw), o); break;
      default: throw new Error(`binary encoding of ${datatype} is not supported`);
    }
  });
  return buf;
}

/** Decodes a binary-extension output. 64-bit integers become bigint; FP16/BF16 are not supported. */
export function decodeTensor(datatype: TritonDatatype, data: Uint8Array): TensorValue[] {
  if (datatype === 'BYTES') return decodeBytesTensor(data);
  const size = FIXED_SIZE[datatype];
  if (!size || datatype === 'FP16' || datatype === 'BF16') throw new Error(`binary decoding of ${datatype} is not supported`);
  if (data.byteLength % size !== 0) throw new Error(`${datatype} tensor of ${data.byteLength} bytes is not a multiple of ${size}`);
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const out: TensorValue[] = [];
  for (let o = 0; o < buf.length; o += size) {
    switch (datatype) {
      case 'BOOL': out.push(buf.readUInt8(o) !== 0); break;
      case 'UINT8': out.push(buf.readUInt8(o)); break;
      case 'INT8': out.push(buf.readInt8(o)); break;
      case 'UINT16': out.push(buf.readUInt16LE(o)); break;
      case 'INT16': out.push(buf.readInt16LE(o)); break;
      case 'UINT32': out.push(buf.readUInt32LE(o)); break;
      case 'INT32': out.push(buf.readInt32LE(o)); break;
      case 'FP32': out.push(buf.readFloatLE(o)); break;
      case 'FP64': out.push(buf.readDoubleLE(o)); break;
      case 'UINT64': out.push(buf.readBigUInt64LE(o)); break;
      case 'INT64': out.push(buf.readBigInt64LE(o)); break;
      default: throw new Error(`binary decoding of ${datatype} is not supported`);
    }
  }
  return out;
}
