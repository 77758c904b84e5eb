// Byte-constant emitters for generated AssemblyScript: a constant of n bytes is compared with
// ⌈n/8⌉ wide little-endian loads (u64, then u32/u16/u8 for short tails, overlapping the last
// u64 when n > 8) against immediates, never with a memcmp loop; long or case-folded constants go
// to static data. Every load stays inside [p, p + n).
import { encodeRaw } from '../raw-text.js';

/** One load of a chunk plan. */
export interface Chunk {
  offset: number;
  width: 1 | 2 | 4 | 8;
}

/** The loads that cover n bytes exactly (the last u64 may overlap the previous one). */
export function chunkPlan(n: number): Chunk[] {
  if (n >= 8) {
    const out: Chunk[] = [];
    let off = 0;
    for (; off + 8 <= n; off += 8) out.push({ offset: off, width: 8 });
    if (off < n) out.push({ offset: n - 8, width: 8 });
    return out;
  }
  switch (n) {
    case 0:
      return [];
    case 1:
      return [{ offset: 0, width: 1 }];
    case 2:
      return [{ offset: 0, width: 2 }];
    case 3:
      return [
        { offset: 0, width: 2 },
        { offset: 2, width: 1 },
      ];
    case 4:
      return [{ offset: 0, width: 4 }];
    case 5:
      return [
        { offset: 0, width: 4 },
        { offset: 4, width: 1 },
      ];
    case 6:
      return [
        { offset: 0, width: 4 },
        { offset: 4, width: 2 },
      ];
    default:
      return [
        { offset: 0, width: 4 },
        { offset: 3, width: 4 },
      ];
  }
}

const TYPE = { 1: 'u8', 2: 'u16', 4: 'u32', 8: 'u64' } as const;

/** The AssemblyScript type of a chunk. */
export function chunkType(c: Chunk): string {
  return TYPE[c.width];
}

/** The little-endian value of a chunk of `bytes`, as an AssemblyScript literal. */
export function chunkValue(bytes: Uint8Array, c: Chunk): string {
  let v = 0n;
  for (let i = c.width - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[c.offset + i]!);
  return `0x${v.toString(16)}`;
}

/** `load<T>(ptr + off)` for a chunk. */
export function chunkLoad(ptr: string, c: Chunk): string {
  return `load<${chunkType(c)}>(${ptr}${c.offset ? ` + ${c.offset}` : ''})`;
}

/** An expression true when the n bytes at `ptr` equal `bytes` (length checked by the caller). */
export function eqAt(ptr: string, bytes: Uint8Array): string {
  const plan = chunkPlan(bytes.length);
  if (plan.length === 0) return 'true';
  return plan.map((c) => `${chunkLoad(ptr, c)} == ${chunkValue(bytes, c)}`).join(' && ');
}

/** `memory.data<u8>([...])` for static bytes. */
export function staticBytes(bytes: Uint8Array): string {
  return `memory.data<u8>([${Array.from(bytes).join(', ')}])`;
}

/** UTF-8 bytes of a string, its raw bytes (`\xHH`, raw-text.ts) as themselves. */
export function utf8Bytes(s: string): Uint8Array {
  return encodeRaw(s);
}

/** A u64 literal from a bigint in [0, 2^64). */
export function u64Literal(v: bigint): string {
  return `0x${v.toString(16)}`;
}
