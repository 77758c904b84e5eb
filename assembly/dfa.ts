// Regex matching at run time: a DFA built at codegen time (host/engine/codegen/regex.ts) walked
// over the value's bytes, one table load per byte, no backtracking. Table: 256 u8 next-states
// per state (state 0 = dead, 1 = start); `acc` holds one accept byte per state.

/** True when the DFA at t accepts the whole string (a, l). */
export function dfaMatch(t: usize, acc: usize, a: usize, l: u32): bool {
  let s: usize = 1;
  for (let i: u32 = 0; i < l; i++) {
    s = usize(load<u8>(t + (s << 8) + usize(load<u8>(a + i))));
    if (s == 0) return false;
  }
  return load<u8>(acc + s) != 0;
}
