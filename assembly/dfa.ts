// Compiled `regex` matchers (host/engine/codegen/regex.ts), both linear in the value. dfaMatch: a
// DFA of at most 255 states as `t`, 256 bytes (next state) per state (state 0 = dead, 1 = start),
// and `acc`, one accept byte per state. nfaMatch: the bit-parallel position form, u64 rows of
// `w` words: label[256], first[V], final[V], follow[V * V][n] (V = 2 when flags & 1, the pattern
// has `\b`/`\B`, else 1); flags & 2: the empty value matches.
import { MISSING, utf8Sanitized } from './transform';

/** True when the DFA at t accepts the whole string (a, l). */
export function dfaMatch(t: usize, acc: usize, a: usize, l: u32): bool {
  let s: usize = 1;
  for (let i: u32 = 0; i < l; i++) {
    s = usize(load<u8>(t + (s << 8) + usize(load<u8>(a + i))));
    if (s == 0) return false;
  }
  return load<u8>(acc + s) != 0;
}

/** Most words of a position set (host REGEX_BUDGET.positions / 64). */
const NFA_WORDS: usize = 8;
const live = memory.data(<i32>NFA_WORDS * 8);
const next = memory.data(<i32>NFA_WORDS * 8);

@inline function wordByte(b: u32): u32 {
  return u32(b - 48 < 10 || (b | 32) - 97 < 26 || b == 95);
}

/** True when the position form at t (n positions, w words per set) accepts the whole string (a, l). */
export function nfaMatch(t: usize, n: u32, w: u32, flags: u32, a: usize, l: u32): bool {
  if (l == 0) return (flags & 2) != 0;
  const word = (flags & 1) != 0;
  const row = usize(w) << 3;
  const variants: usize = word ? 2 : 1;
  const first = t + 256 * row;
  const final = first + variants * row;
  const follow = final + variants * row;
  let b = u32(load<u8>(a));
  let nw = word ? wordByte(b) : 0;
  let any: u64 = 0;
  for (let k: usize = 0; k < usize(w); k++) {
    const v = load<u64>(first + usize(nw) * row + (k << 3)) & load<u64>(t + usize(b) * row + (k << 3));
    store<u64>(live + (k << 3), v);
    any |= v;
  }
  if (any == 0) return false;
  for (let i: u32 = 1; i < l; i++) {
    const pw = nw;
    b = u32(load<u8>(a + i));
    nw = word ? wordByte(b) : 0;
    const rows = follow + usize(pw * 2 + nw) * usize(n) * row;
    for (let k: usize = 0; k < usize(w); k++) store<u64>(next + (k << 3), 0);
    for (let j: usize = 0; j < usize(w); j++) {
      let bits = load<u64>(live + (j << 3));
      while (bits != 0) {
        const p = (j << 6) + usize(ctz(bits));
        bits &= bits - 1;
        const r = rows + p * row;
        for (let k: usize = 0; k < usize(w); k++) store<u64>(next + (k << 3), load<u64>(next + (k << 3)) | load<u64>(r + (k << 3)));
      }
    }
    any = 0;
    const lab = t + usize(b) * row;
    for (let k: usize = 0; k < usize(w); k++) {
      const v = load<u64>(next + (k << 3)) & load<u64>(lab + (k << 3));
      store<u64>(live + (k << 3), v);
      any |= v;
    }
    if (any == 0) return false;
  }
  const fin = final + usize(nw) * row;
  for (let k: usize = 0; k < usize(w); k++) if ((load<u64>(live + (k << 3)) & load<u64>(fin + (k << 3))) != 0) return true;
  return false;
}

/**
 * `regex` as Falco 0.45 runs it: on the value with invalid UTF-8 replaced by U+FFFD. The
 * automata take valid UTF-8 only, so a value they accept needs no replacement; only a value they
 * refuse is checked, and matched again replaced when it is not valid UTF-8 (utf8Sanitized).
 */
export function dfaRegex(t: usize, acc: usize, a: usize, l: u32): bool {
  if (dfaMatch(t, acc, a, l)) return true;
  const s = utf8Sanitized(a, l);
  return s != MISSING && dfaMatch(t, acc, usize(u32(s)), u32(s >>> 32));
}

/** nfaMatch with dfaRegex's treatment of invalid UTF-8. */
export function nfaRegex(t: usize, n: u32, w: u32, flags: u32, a: usize, l: u32): bool {
  if (nfaMatch(t, n, w, flags, a, l)) return true;
  const s = utf8Sanitized(a, l);
  return s != MISSING && nfaMatch(t, n, w, flags, usize(u32(s)), u32(s >>> 32));
}
