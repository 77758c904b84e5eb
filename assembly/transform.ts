// Field transformers (tolower, toupper, b64, basename, concat) over byte ranges. Results that are
// new strings go to the per-event scratch area [EVAL_SCRATCH_BASE, +SIZE), reset before each
// event. Values have no length limit, so a result may not fit: it is then never written past the
// end; it reads as missing and the event is marked (scratchFull), and the generated evaluate()
// hands a marked event back to the host (RAE_MATCH_REFERENCE) instead of a verdict that could be
// wrong. Semantics follow the reference interpreter (host/engine/interpreter.ts).
import { EVAL_SCRATCH_BASE, EVAL_SCRATCH_SIZE } from './abi';
import { lower, upper } from './strings';

/** A string ref as loaded from memory (low 32 bits addr, high 32 bits len); MISSING = absent. */
export const MISSING: u64 = 0xffffffffffffffff;

let top: usize = EVAL_SCRATCH_BASE;
let full: bool = false;

/** Frees the scratch area (called before each event). */
@inline export function scratchReset(): void {
  top = EVAL_SCRATCH_BASE;
  full = false;
}

/** True when a transformer result of the current event did not fit the scratch area. */
@inline export function scratchFull(): bool {
  return full;
}

@inline export function pack(a: usize, l: u32): u64 {
  return u64(u32(a)) | (u64(l) << 32);
}

function reserve(n: u64): usize {
  if (u64(top) + n > u64(EVAL_SCRATCH_BASE + EVAL_SCRATCH_SIZE)) {
    full = true;
    return 0;
  }
  const at = top;
  top += usize((n + 7) & ~7);
  return at;
}

/** tolower / toupper into scratch. */
export function foldCase(v: u64, up: bool): u64 {
  if (v == MISSING) return MISSING;
  const a = usize(u32(v));
  const l = u32(v >>> 32);
  const d = reserve(l);
  if (d == 0) return MISSING;
  for (let i: u32 = 0; i < l; i++) {
    const c = u32(load<u8>(a + i));
    store<u8>(d + i, u8(up ? upper(c) : lower(c)));
  }
  return pack(d, l);
}

/** basename: the bytes after the last '/', a view into the same string. */
export function baseName(v: u64): u64 {
  if (v == MISSING) return MISSING;
  const a = usize(u32(v));
  const l = u32(v >>> 32);
  let i = l;
  while (i > 0 && load<u8>(a + i - 1) != 47) i--;
  return pack(a + i, l - i);
}

@inline function b64val(c: u32): i32 {
  if (c - 65 < 26) return i32(c - 65);
  if (c - 97 < 26) return i32(c - 71);
  if (c - 48 < 10) return i32(c + 4);
  if (c == 43) return 62;
  if (c == 47) return 63;
  return -1;
}

/** Standard base64 decode; the decoded bytes are taken as Latin-1 and re-encoded as UTF-8. */
export function b64(v: u64): u64 {
  if (v == MISSING) return MISSING;
  const a = usize(u32(v));
  const l = u32(v >>> 32);
  if (l % 4 != 0) return MISSING;
  let pad: u32 = 0;
  while (pad < 2 && pad < l && load<u8>(a + l - 1 - pad) == 61) pad++;
  for (let i: u32 = 0; i < l - pad; i++) if (b64val(load<u8>(a + i)) < 0) return MISSING;
  const d = reserve(u64(l / 4) * 6); // (l / 4) * 3 bytes, each at most 2 in UTF-8
  if (d == 0) return MISSING;
  let n: u32 = 0;
  let acc: u32 = 0;
  let bits: u32 = 0;
  for (let i: u32 = 0; i < l - pad; i++) {
    acc = (acc << 6) | u32(b64val(load<u8>(a + i)));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const b = (acc >> bits) & 0xff;
      if (b < 0x80) store<u8>(d + n++, u8(b));
      else {
        store<u8>(d + n++, u8(0xc0 | (b >> 6)));
        store<u8>(d + n++, u8(0x80 | (b & 0x3f)));
      }
    }
  }
  return pack(d, n);
}

/** An empty concat result at the top of the scratch area (concatAdd appends to it). */
export function concatStart(): u64 {
  return pack(top, 0);
}

/** Appends v to the concat result acc (which must be the last scratch allocation). */
export function concatAdd(acc: u64, v: u64): u64 {
  if (acc == MISSING || v == MISSING) return MISSING;
  const d = usize(u32(acc));
  const dl = u32(acc >>> 32);
  const a = usize(u32(v));
  const l = u32(v >>> 32);
  if (u64(d) + u64(dl) + u64(l) > u64(EVAL_SCRATCH_BASE + EVAL_SCRATCH_SIZE)) {
    full = true;
    return MISSING;
  }
  memory.copy(d + dl, a, l);
  top = (d + dl + l + 7) & ~7;
  return pack(d, dl + l);
}
