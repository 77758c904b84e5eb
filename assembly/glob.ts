// fnmatch-style glob (no FNM_PATHNAME: `*` and `?` also match `/`; `[...]`, `[!...]`, `\`
// escapes) and Falco's pmatch (a pattern path is a component-wise prefix of the value), over
// byte ranges, with the semantics of host/engine/operators.ts. Patterns are static data laid out
// by the code generator; a case-folded glob gets an already lower-cased pattern.
import { lower } from './strings';

@inline function at(p: usize, i: i32, fold: bool): u32 {
  const c = u32(load<u8>(p + <usize>i));
  return fold ? lower(c) : c;
}

/** Bracket expression at p[i] against byte ch: (next << 1) | matched, or -1 when unterminated. */
function matchClass(p: usize, pl: i32, i: i32, ch: u32): i32 {
  let j = i + 1;
  let negate = false;
  if (j < pl && (load<u8>(p + j) == 33 || load<u8>(p + j) == 94)) {
    negate = true;
    j++;
  }
  let matched = false;
  let first = true;
  while (j < pl && (load<u8>(p + j) != 93 || first)) {
    first = false;
    let lo = u32(load<u8>(p + j));
    if (lo == 92 && j + 1 < pl) lo = u32(load<u8>(p + ++j));
    if (j + 1 < pl && load<u8>(p + j + 1) == 45 && j + 2 < pl && load<u8>(p + j + 2) != 93) {
      let hi = u32(load<u8>(p + j + 2));
      if (hi == 92 && j + 3 < pl) {
        hi = u32(load<u8>(p + j + 3));
        j++;
      }
      if (ch >= lo && ch <= hi) matched = true;
      j += 3;
    } else {
      if (ch == lo) matched = true;
      j++;
    }
  }
  if (j >= pl) return -1;
  return ((j + 1) << 1) | i32(matched != negate);
}

/** glob(pattern, value); with `fold`, the value is ASCII-lowered (the pattern already is). */
export function globMatch(p: usize, pl: i32, v: usize, vl: i32, fold: bool): bool {
  let pi = 0;
  let si = 0;
  let starP = -1;
  let starS = 0;
  while (si < vl) {
    if (pi < pl) {
      const c = u32(load<u8>(p + pi));
      const ch = at(v, si, fold);
      if (c == 42) {
        starP = pi++;
        starS = si;
        continue;
      }
      if (c == 63) {
        pi++;
        si++;
        continue;
      }
      if (c == 91) {
        const r = matchClass(p, pl, pi, ch);
        if (r >= 0 && (r & 1) != 0) {
          pi = r >> 1;
          si++;
          continue;
        }
        if (r < 0 && ch == 91) {
          pi++;
          si++;
          continue;
        }
      } else if (c == 92 && pi + 1 < pl) {
        if (u32(load<u8>(p + pi + 1)) == ch) {
          pi += 2;
          si++;
          continue;
        }
      } else if (c == ch) {
        pi++;
        si++;
        continue;
      }
    }
    if (starP >= 0) {
      pi = starP + 1;
      si = ++starS;
      continue;
    }
    return false;
  }
  while (pi < pl && load<u8>(p + pi) == 42) pi++;
  return pi == pl;
}

/**
 * pmatch: true when some pattern's components are a prefix of the value's components (empty
 * components skipped). Table at t: u32 count, then per pattern u32 ncomps and per component
 * u32 isGlob, u32 len, the bytes padded to 4.
 */
export function pmatch(t: usize, v: usize, vl: i32): bool {
  const count = load<u32>(t);
  let q = t + 4;
  for (let k: u32 = 0; k < count; k++) {
    const ncomps = load<u32>(q);
    q += 4;
    let ok = true;
    let si = 0;
    for (let c: u32 = 0; c < ncomps; c++) {
      const isGlob = load<u32>(q);
      const cl = i32(load<u32>(q + 4));
      const cp = q + 8;
      q = cp + ((<usize>cl + 3) & ~3);
      if (!ok) continue;
      while (si < vl && load<u8>(v + si) == 47) si++;
      if (si >= vl) {
        ok = false;
        continue;
      }
      let end = si;
      while (end < vl && load<u8>(v + end) != 47) end++;
      const n = end - si;
      ok = isGlob != 0 ? globMatch(cp, cl, v + si, n, false) : n == cl && eqRange(cp, v + si, n);
      si = end;
    }
    if (ok) return true;
  }
  return false;
}

function eqRange(a: usize, b: usize, n: i32): bool {
  for (let i = 0; i < n; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
  return true;
}
