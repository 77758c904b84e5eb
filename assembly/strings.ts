// Byte-range string primitives over linear memory: ordering, ASCII case folding, byte search.
// Strings are (address, length) pairs; nothing here allocates or reads outside [a, a + len).

/** ASCII-only lower-casing of one byte (libsinsp folds ASCII letters only). */
@inline export function lower(c: u32): u32 {
  return c - 65 < 26 ? c + 32 : c;
}

/** ASCII-only upper-casing of one byte. */
@inline export function upper(c: u32): u32 {
  return c - 97 < 26 ? c - 32 : c;
}

/** Byte-wise equality of two ranges of the same length. */
export function eqBytes(a: usize, b: usize, n: u32): bool {
  let i: u32 = 0;
  while (i + 8 <= n) {
    if (load<u64>(a + i) != load<u64>(b + i)) return false;
    i += 8;
  }
  while (i < n) {
    if (load<u8>(a + i) != load<u8>(b + i)) return false;
    i++;
  }
  return true;
}

/** Lexicographic byte order: negative, zero or positive (UTF-8 order = code point order). */
export function cmpBytes(a: usize, al: u32, b: usize, bl: u32): i32 {
  const n = al < bl ? al : bl;
  for (let i: u32 = 0; i < n; i++) {
    const x = i32(load<u8>(a + i));
    const y = i32(load<u8>(b + i));
    if (x != y) return x - y;
  }
  return i32(al) - i32(bl);
}

/** True when needle (n bytes at b) occurs in the haystack (hl bytes at h). */
export function findBytes(h: usize, hl: u32, b: usize, n: u32): bool {
  if (n == 0) return true;
  if (n > hl) return false;
  const first = load<u8>(b);
  const last = hl - n;
  for (let i: u32 = 0; i <= last; i++) {
    if (load<u8>(h + i) == first && eqBytes(h + i, b, n)) return true;
  }
  return false;
}

/** Case-insensitive (ASCII) equality; `b` must already be lower-case. */
export function ieqBytes(a: usize, b: usize, n: u32): bool {
  for (let i: u32 = 0; i < n; i++) {
    if (lower(load<u8>(a + i)) != u32(load<u8>(b + i))) return false;
  }
  return true;
}

/** Case-insensitive (ASCII) search; the needle at b must already be lower-case. */
export function ifindBytes(h: usize, hl: u32, b: usize, n: u32): bool {
  if (n == 0) return true;
  if (n > hl) return false;
  const first = u32(load<u8>(b));
  const last = hl - n;
  for (let i: u32 = 0; i <= last; i++) {
    if (lower(load<u8>(h + i)) == first && ieqBytes(h + i, b, n)) return true;
  }
  return false;
}
