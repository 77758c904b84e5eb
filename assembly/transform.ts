// Field transformers (tolower, toupper, b64, basename, concat, join, getopt, and the lists they
// take and give) over byte ranges. A list is a packed ref to an array of string refs (as a list
// slot of a record). Results that are
// new strings go to the per-event scratch area [EVAL_SCRATCH_BASE, +SIZE), reset before each
// event. Values have no length limit, so a result may not fit: it is then never written past the
// end; it reads as missing and the event is marked (scratchFull), and the generated evaluate()
// hands a marked event back to the host (RAE_MATCH_REFERENCE) instead of a verdict that could be
// wrong. Semantics follow the reference interpreter (host/engine/interpreter.ts).
import { EVAL_SCRATCH_BASE, EVAL_SCRATCH_SIZE } from './abi';
import { eqBytes, lower, upper } from './strings';

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

/** Standard base64 decode: the decoded bytes, raw (Falco 0.45 compares raw bytes). */
export function b64(v: u64): u64 {
  if (v == MISSING) return MISSING;
  const a = usize(u32(v));
  const l = u32(v >>> 32);
  let pad: u32 = 0;
  while (pad < 2 && pad < l && load<u8>(a + l - 1 - pad) == 61) pad++;
  // padding may be left out; when present the length is a multiple of 4
  if (pad > 0 ? l % 4 != 0 : l % 4 == 1) return MISSING;
  for (let i: u32 = 0; i < l - pad; i++) if (b64val(load<u8>(a + i)) < 0) return MISSING;
  const d = reserve(u64((l + 3) / 4) * 3); // at most (l / 4) * 3 bytes
  if (d == 0) return MISSING;
  let n: u32 = 0;
  let acc: u32 = 0;
  let bits: u32 = 0;
  for (let i: u32 = 0; i < l - pad; i++) {
    acc = (acc << 6) | u32(b64val(load<u8>(a + i)));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      store<u8>(d + n++, u8(acc >> bits));
    }
  }
  return pack(d, n);
}

/**
 * The UTF-8 sequence at a[i] (RFC 3629's table, as host/engine/raw-text.ts): its length n when it
 * is valid, else -m with m the length of its maximal invalid subpart (WHATWG: the lead byte and
 * the continuation bytes that fit it, at least 1).
 */
function utf8Scan(a: usize, i: u32, l: u32): i32 {
  const c = u32(load<u8>(a + i));
  if (c < 0x80) return 1;
  let need: u32 = 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (c - 0xc2 < 30) need = 1;
  else if (c - 0xe0 < 16) {
    need = 2;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f; // ED A0..BF would be a surrogate
  } else if (c - 0xf0 < 5) {
    need = 3;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else return -1;
  let n: u32 = 1;
  while (need > 0 && i + n < l) {
    const b = u32(load<u8>(a + i + n));
    if (b < lo || b > hi) break;
    lo = 0x80;
    hi = 0xbf;
    n++;
    need--;
  }
  return need == 0 ? i32(n) : -i32(n);
}

/**
 * The value with each invalid UTF-8 sequence replaced by U+FFFD (one per maximal subpart, as
 * TextDecoder), in scratch: what `regex` sees (Falco 0.45). MISSING when the value is valid UTF-8
 * (nothing to replace) or the result does not fit (the event is then handed back).
 */
export function utf8Sanitized(a: usize, l: u32): u64 {
  let i: u32 = 0;
  let n: i32 = 0;
  while (i < l && (n = utf8Scan(a, i, l)) > 0) i += u32(n);
  if (i == l) return MISSING;
  const d = reserve(u64(l) * 3);
  if (d == 0) return MISSING;
  memory.copy(d, a, i);
  let o = i;
  while (i < l) {
    n = utf8Scan(a, i, l);
    if (n > 0) {
      memory.copy(d + o, a + i, usize(n));
      o += u32(n);
      i += u32(n);
      continue;
    }
    store<u8>(d + o, 0xef);
    store<u8>(d + o + 1, 0xbf);
    store<u8>(d + o + 2, 0xbd);
    o += 3;
    i += u32(-n);
  }
  return pack(d, o);
}

/** concat of two strings into a new scratch string (both are computed before, so never overwritten). */
export function concat2(x: u64, y: u64): u64 {
  if (x == MISSING || y == MISSING) return MISSING;
  const xl = u32(x >>> 32);
  const yl = u32(y >>> 32);
  const d = reserve(u64(xl) + u64(yl));
  if (d == 0) return MISSING;
  memory.copy(d, usize(u32(x)), xl);
  memory.copy(d + xl, usize(u32(y)), yl);
  return pack(d, xl + yl);
}

/** Room for n string refs of a list in scratch (0 when it does not fit). */
export function listAlloc(n: u32): usize {
  return reserve(u64(n) << 3);
}

/** Appends the elements of list r to the list being built at d (k elements so far); the new count. */
export function listAppend(d: usize, k: u32, r: u64): u32 {
  const n = u32(r >>> 32);
  memory.copy(d + (usize(k) << 3), usize(u32(r)), usize(n) << 3);
  return k + n;
}

/** A transformer applied to each element of list r: 0 tolower, 1 toupper, 2 b64, 3 basename; missing if one is. */
export function mapList(r: u64, op: i32): u64 {
  if (r == MISSING) return MISSING;
  const n = u32(r >>> 32);
  const src = usize(u32(r));
  const d = listAlloc(n);
  if (d == 0 && n > 0) return MISSING;
  for (let j: u32 = 0; j < n; j++) {
    const x = load<u64>(src + (usize(j) << 3));
    const y = op == 0 ? foldCase(x, false) : op == 1 ? foldCase(x, true) : op == 2 ? b64(x) : baseName(x);
    if (y == MISSING) return MISSING;
    store<u64>(d + (usize(j) << 3), y);
  }
  return pack(d, n);
}

/** join(sep, list): the elements of r separated by sep. */
export function joinList(sep: u64, r: u64): u64 {
  if (sep == MISSING || r == MISSING) return MISSING;
  const n = u32(r >>> 32);
  const src = usize(u32(r));
  const sl = u32(sep >>> 32);
  let total: u64 = n > 0 ? u64(sl) * u64(n - 1) : 0;
  for (let j: u32 = 0; j < n; j++) total += load<u64>(src + (usize(j) << 3)) >>> 32;
  const d = reserve(total);
  if (d == 0 && total > 0) return MISSING;
  let at = d;
  for (let j: u32 = 0; j < n; j++) {
    if (j > 0) {
      memory.copy(at, usize(u32(sep)), sl);
      at += sl;
    }
    const x = load<u64>(src + (usize(j) << 3));
    const l = u32(x >>> 32);
    memory.copy(at, usize(u32(x)), l);
    at += l;
  }
  return pack(d, u32(total));
}

/** An integer in decimal, as a scratch string. */
export function decimal(v: u64, signed: bool): u64 {
  const neg = signed && i64(v) < 0;
  let m: u64 = neg ? u64(0) - v : v;
  const d = reserve(20);
  if (d == 0) return MISSING;
  let n: u32 = 0;
  do {
    store<u8>(d + n++, u8(48 + u32(m % 10)));
    m /= 10;
  } while (m != 0);
  if (neg) store<u8>(d + n++, 45);
  for (let i: u32 = 0, j = n - 1; i < j; i++, j--) {
    const c = load<u8>(d + i);
    store<u8>(d + i, load<u8>(d + j));
    store<u8>(d + j, c);
  }
  return pack(d, n);
}

const QUESTION = memory.data<u8>([63]);

/**
 * libsinsp's getopt() transformer (sinsp_filtercheck_multivalue_transformer.cpp), as the reference
 * interpreter's getopt(): argv is a list, opts the optstring; sel < 0 gives the list of options
 * and values, sel = an option's byte gives that option's last value (missing when absent).
 */
export function getoptList(argv: u64, opts: u64, sel: i32): u64 {
  if (argv == MISSING || opts == MISSING) return MISSING;
  const oa = usize(u32(opts));
  const ol = u32(opts >>> 32);
  // valid options and options with an argument: two 256-bit sets
  const valid = reserve(64);
  if (valid == 0) return MISSING;
  memory.fill(valid, 0, 64);
  const withArg = valid + 32;
  for (let i: u32 = load<u8>(oa) == 58 && ol > 0 ? 1 : 0; i < ol; i++) {
    const c = u32(load<u8>(oa + i));
    if (c == 58) continue;
    store<u8>(valid + (c >> 3), u8(u32(load<u8>(valid + (c >> 3))) | (1 << (c & 7))));
    if (i + 1 < ol && load<u8>(oa + i + 1) == 58) {
      store<u8>(withArg + (c >> 3), u8(u32(load<u8>(withArg + (c >> 3))) | (1 << (c & 7))));
      i++;
    }
  }
  const n = u32(argv >>> 32);
  const src = usize(u32(argv));
  let cap: u64 = 0;
  for (let j: u32 = 0; j < n; j++) cap += (load<u64>(src + (usize(j) << 3)) >>> 32) + 1;
  const d = sel < 0 ? reserve(cap << 3) : 0;
  if (sel < 0 && d == 0 && cap > 0) return MISSING;
  let k: u32 = 0;
  let selected: u64 = MISSING;
  for (let j: u32 = 0; j < n; j++) {
    const x = load<u64>(src + (usize(j) << 3));
    const a = usize(u32(x));
    const l = u32(x >>> 32);
    if (l == 2 && load<u8>(a) == 45 && load<u8>(a + 1) == 45) break;
    if (l > 2 && load<u8>(a) == 45 && load<u8>(a + 1) == 45) continue;
    if (l < 2 || load<u8>(a) != 45) break;
    for (let i: u32 = 1; i < l; i++) {
      const c = u32(load<u8>(a + i));
      if ((load<u8>(valid + (c >> 3)) & (1 << (c & 7))) == 0) {
        if (sel < 0) store<u64>(d + (usize(k++) << 3), pack(QUESTION, 1));
        continue;
      }
      const match = sel < 0 || i32(c) == sel;
      const name = pack(a + i, 1);
      if ((load<u8>(withArg + (c >> 3)) & (1 << (c & 7))) == 0) {
        if (match) {
          if (sel < 0) store<u64>(d + (usize(k++) << 3), name);
          else selected = name;
        }
        continue;
      }
      let value: u64 = MISSING;
      if (i + 1 < l) value = pack(a + i + 1, l - i - 1);
      else if (j + 1 < n) value = load<u64>(src + (usize(++j) << 3));
      if (match) {
        if (value == MISSING) {
          if (sel < 0) store<u64>(d + (usize(k++) << 3), pack(a, 0));
          else selected = pack(a, 0);
        } else if (sel < 0) {
          store<u64>(d + (usize(k++) << 3), name);
          store<u64>(d + (usize(k++) << 3), value);
        } else selected = value;
      }
      break;
    }
  }
  return sel < 0 ? pack(d, k) : selected;
}

/** Whether every (all) or some (!all) element of list x equals an element of list y. */
export function listIn(x: u64, y: u64, all: bool): bool {
  const n = u32(x >>> 32);
  const m = u32(y >>> 32);
  const xs = usize(u32(x));
  const ys = usize(u32(y));
  for (let i: u32 = 0; i < n; i++) {
    const v = load<u64>(xs + (usize(i) << 3));
    const vl = u32(v >>> 32);
    let found = false;
    for (let j: u32 = 0; j < m && !found; j++) {
      const w = load<u64>(ys + (usize(j) << 3));
      found = u32(w >>> 32) == vl && eqBytes(usize(u32(v)), usize(u32(w)), vl);
    }
    if (found != all) return !all;
  }
  return all;
}
