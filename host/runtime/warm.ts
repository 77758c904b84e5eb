// Warming a freshly compiled module before it goes live: V8 compiles wasm lazily and runs it in
// Liftoff first, so the first batches after a swap would be 10-30x slower
// (reference/wasm-evaluator-notes.md §4e). Running synthetic batches through every evt.type group
// in the compile worker tiers the code up; the tiered code lives in the shared native module.
import { MEM, SRC } from '../abi/module.js';
import type { ProfileFn } from './rule-tally.js';

/** What warming needs to know about a module. */
export interface WarmPlan {
  syscallStride: number;
  auditStride: number;
  typeIds: number[];
  /** The group slots the rule figures profile (the `profile` export; slot 0 is the audit group's). */
  profileSlots?: number[];
}

/** Writes n synthetic records: every slot (string, list or number) points at a self-referencing, in-bounds area. */
export function fillSynthetic(u8: Uint8Array, dv: DataView, stride: number, n: number, types: number[]): void {
  const area = MEM.batchBase + n * stride + 64;
  const ref = BigInt(area) | (8n << 32n);
  for (let j = 0; j < 16; j++) dv.setBigUint64(area + 8 * j, ref, true);
  for (let i = 0; i < n; i++) {
    const at = MEM.batchBase + i * stride;
    u8.fill(0, at, at + stride);
    // a third of the records have every slot missing, the rest every slot present
    for (let off = 8; off + 8 <= stride; off += 8) if (i % 3 !== 0) dv.setBigUint64(at + off, ref, true);
    dv.setUint32(at, types.length > 0 ? types[i % types.length]! : 0, true);
    dv.setUint32(at + 4, 0, true);
  }
}

/**
 * Calls the `profile` export once in each of its shapes (the loop alone; a group whole, without
 * its first rule, and its first rule alone) for the groups of `src`, over a few of the synthetic
 * records: V8 compiles each wasm function at its first call, and the rule figures' first sampled
 * calls after a swap otherwise paid that on the main thread (up to 12 ms in one batch, the eval
 * bench on a quiet machine). The compiled code lives in the shared native module.
 */
function warmProfiles(exports: WebAssembly.Exports, plan: WarmPlan, src: number, stride: number): void {
  const profile = exports.profile as ProfileFn | undefined;
  if (!profile || !plan.profileSlots?.length) return;
  const m = 64;
  new Uint32Array((exports.memory as WebAssembly.Memory).buffer, MEM.outBase, m).set(Array.from({ length: m }, (_, i) => i));
  const slots = plan.profileSlots.filter((slot) => (src === SRC.k8s_audit ? slot === 0 : slot !== 0));
  if (slots.length > 0) profile(-1, -1, 0, MEM.batchBase, stride, MEM.outBase, m);
  for (const slot of slots) for (const skip of [-1, 0, -2]) profile(slot, skip, 0, MEM.batchBase, stride, MEM.outBase, m);
}

/**
 * Runs up to `rounds` synthetic batches of n events per source, within about `budgetMs`: the
 * first batch of each source is a 256-event probe, and warming stops once the budget is spent
 * (a rule of 10,000 terms costs about 0.5 ms an event before tier-up: 12 full batches took 33 s).
 * Returns the time taken (ms).
 */
export function warmInstance(exports: WebAssembly.Exports, plan: WarmPlan, rounds = 12, n = 4096, budgetMs = 1500): number {
  const t0 = performance.now();
  const mem = exports.memory as WebAssembly.Memory;
  const evaluate = exports.evaluate as (src: number, rec: number, n: number, first: number, out: number, cap: number) => number;
  const u8 = new Uint8Array(mem.buffer);
  const dv = new DataView(mem.buffer);
  for (const [src, stride] of [
    [SRC.syscall, plan.syscallStride],
    [SRC.k8s_audit, plan.auditStride],
  ] as const) {
    fillSynthetic(u8, dv, stride, n, src === SRC.syscall ? plan.typeIds : []);
    evaluate(src, MEM.batchBase, Math.min(n, 256), 0, MEM.outBase, MEM.outSize / 8);
    for (let r = 0; r < rounds && performance.now() - t0 < budgetMs; r++) evaluate(src, MEM.batchBase, n, r & 1, MEM.outBase, MEM.outSize / 8);
    warmProfiles(exports, plan, src, stride);
  }
  // No clean-up of the batch area: the instance is thrown away (build.ts), and zeroing all of it
  // committed its 20 MiB of pages, on the main thread too when the module came from the disk cache.
  return performance.now() - t0;
}
