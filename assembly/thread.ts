// Thread entries (struct rae_thread, probes/src/eval_abi.h): the event's process and its
// ancestors through parent links. Walks are bounded by EVAL_MAX_DEPTH, so a cycle in the links
// (a host bug) cannot loop forever.
import { EVAL_MAX_DEPTH, REC_THREAD, THREAD_PARENT, THREAD_PRESENT } from './abi';

/** The thread entry `level` links above the event's process (0 = the process), or 0. */
export function ancestor(e: usize, level: i32): usize {
  let t = usize(load<u32>(e + REC_THREAD));
  for (let i = 0; i < level && t != 0; i++) t = usize(load<u32>(t + THREAD_PARENT));
  return t;
}

/** The next entry of an ancestor walk, or 0 when the walk ends (no parent or too deep). */
@inline export function parentOf(t: usize, depth: i32): usize {
  return depth >= EVAL_MAX_DEPTH ? 0 : usize(load<u32>(t + THREAD_PARENT));
}

/** True when field bit `bit` of entry t is known. */
@inline export function has(t: usize, bit: u32): bool {
  return t != 0 && (load<u32>(t + THREAD_PRESENT) & bit) != 0;
}
