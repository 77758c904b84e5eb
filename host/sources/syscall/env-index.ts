// proc.env in the thread table's heap: one allocation per environment holding the text libsinsp's
// concatenate_all_env gives (the variables joined by blanks: NUL separators become blanks, so the
// text is as long as the NUL-separated bytes) and, after it, the length of each variable, so
// proc.env[NAME] finds whole variables even when a value holds a blank:
//
//   [text: L bytes][pad to 2][u16 n][u16 length of variable 0] ... [u16 length of variable n-1]
//
// The thread entry's env ref is (text address, L): the compiled rules read the text directly.
// probes/addon/ingest.c reads the same layout (env_value); the thread table writes it (writeEnv)
// and keeps it whole when it compacts its heap (envSpan).

/** Bytes of the allocation for the NUL-separated environment `raw` (its last NUL already dropped). */
export function envBytes(raw: Uint8Array): number {
  let n = raw.length > 0 ? 1 : 0;
  for (const b of raw) if (b === 0) n++;
  return indexAt(raw.length) + 2 + 2 * n;
}

/** Where the variable count sits after a text of `len` bytes (relative to the text). */
function indexAt(len: number): number {
  return (len + 1) & ~1;
}

/** Writes the text and variable lengths of `raw` at u8[addr..] (envBytes(raw) bytes). */
export function writeEnv(u8: Uint8Array, addr: number, raw: Uint8Array): void {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const idx = addr + indexAt(raw.length);
  let n = 0;
  let start = 0;
  for (let i = 0; i <= raw.length; i++) {
    if (i < raw.length && raw[i] !== 0) continue;
    if (raw.length > 0) dv.setUint16(idx + 2 + 2 * n++, i - start, true);
    start = i + 1;
  }
  dv.setUint16(idx, n, true);
  for (let i = 0; i < raw.length; i++) u8[addr + i] = raw[i] === 0 ? 32 : raw[i]!;
}

/** Bytes of the allocation whose text is u8[addr, addr + len): the text, its padding and the lengths. */
export function envSpan(u8: Uint8Array, addr: number, len: number): number {
  const at = addr + indexAt(len);
  return indexAt(len) + 2 + 2 * (u8[at]! | (u8[at + 1]! << 8));
}

/**
 * proc.env[NAME] (libsinsp sinsp_threadinfo::get_env(name), threadinfo.cpp): the first variable
 * longer than `NAME=` that starts with it gives its value with blanks stripped from both ends; no
 * such variable gives "" (a value, not a missing field). Returns the value's [offset, length] in u8.
 */
export function envValue(u8: Uint8Array, addr: number, len: number, name: Uint8Array): [number, number] {
  const idx = addr + indexAt(len);
  const n = u8[idx]! | (u8[idx + 1]! << 8);
  const nl = name.length;
  for (let k = 0, pos = addr; k < n; k++) {
    const vl = u8[idx + 2 + 2 * k]! | (u8[idx + 3 + 2 * k]! << 8);
    if (vl > nl + 1 && u8[pos + nl] === 61 && sameBytes(u8, pos, name)) {
      let first = pos + nl + 1;
      let last = pos + vl - 1;
      while (first <= last && u8[first] === 32) first++;
      while (last >= first && u8[last] === 32) last--;
      return [first, last - first + 1];
    }
    pos += vl + 1;
  }
  return [addr, 0];
}

function sameBytes(u8: Uint8Array, at: number, name: Uint8Array): boolean {
  for (let i = 0; i < name.length; i++) if (u8[at + i] !== name[i]) return false;
  return true;
}
