// The compiled module's side of the rule figures (docs/rule-cost.md). Consumes, after each
// evaluate call, the module's group-call counts (`counts()`, one u32 per group) and the call's
// match records; produces per-rule evaluations, matches and cost in a RuleStats.
// - Evaluations: a group's calls are added to each of its rules; under rule matching `first`, a
//   match at rule j stops its group, so the rules after j in that event's group are taken back
//   (matches are rare, so this costs nothing per event). Exact for every event the module judged.
// - Cost: a call that reaches a rule without a rate yet, and one call in `sampleEvery`, is sampled: each rule that events
//   reached runs alone (`profile`) over exactly those events, timed; the same loop without a rule
//   (the baseline) and an empty call (the timer) are subtracted. That gives each rule a rate
//   (seconds per evaluation) that costs all its evaluations (rule-stats.ts).
import { MATCH_REFERENCE, MEM, SRC } from '../abi/module.js';
import type { GeneratedModule } from '../engine/codegen/index.js';
import type { RuleStats } from '../engine/index.js';

type RuleCounter = ReturnType<RuleStats['counter']>;
type ProfileFn = (id: number, rec: number, stride: number, idx: number, m: number) => number;

/** A sample times each rule over at least this many evaluations (its events listed again as needed), so that the timer's resolution and call overhead stay small beside it. */
const MIN_TIMED = 1024;

/** Default: one evaluate call in 64 is timed rule by rule (under 2 % of evaluation time measured, `npm run bench -- rule-cost`). */
const DEFAULT_SAMPLE_EVERY = 64;

/** Counts one module's rule figures into a RuleStats. */
export class ModuleTally {
  private readonly counters: RuleCounter[];
  /** counts() slot -> rule ids of its group, in order. */
  private readonly slots = new Map<number, readonly number[]>();
  /** rule id -> its slots. */
  private readonly slotsOf: number[][];
  private readonly delta: Float64Array;
  private readonly counts: Uint32Array;
  private readonly profileFn: ProfileFn;
  private sampleIn = 0;
  /** Profile loops called once already: the first call of a wasm function compiles it (lazy compilation), which must not be timed. */
  private readonly warm = new Set<number>();

  constructor(
    private readonly memory: WebAssembly.Memory,
    exports: WebAssembly.Exports,
    private readonly generated: GeneratedModule,
    stats: RuleStats,
    private readonly sampleEvery = DEFAULT_SAMPLE_EVERY,
  ) {
    this.counters = generated.rules.map((r) => stats.counter(r));
    this.slotsOf = generated.rules.map(() => []);
    for (const s of generated.countSlots) {
      this.slots.set(s.slot, s.rules);
      for (const id of s.rules) this.slotsOf[id]!.push(s.slot);
    }
    this.delta = new Float64Array(generated.rules.length);
    this.counts = new Uint32Array(memory.buffer, (exports.counts as () => number)(), 1 + Math.max(0, ...this.slots.keys()));
    this.profileFn = exports.profile as ProfileFn;
    // whatever was counted before (warm-up batches) is not the rules' work
    this.counts.fill(0);
  }

  /**
   * After one evaluate call over n records at rec that wrote k match records at the match area
   * (read them before anything else writes there): counts, and perhaps samples the cost.
   */
  afterCall(src: number, rec: number, n: number, k: number, first: boolean): void {
    if (!this.generated.counters) return;
    const counts = this.counts;
    const delta = this.delta;
    let any = false;
    for (const [slot, ids] of this.slots) {
      const c = counts[slot]!;
      if (c === 0) continue;
      counts[slot] = 0;
      any = true;
      for (const id of ids) delta[id]! += c;
    }
    if (!any) return;
    const stride = this.stride(src);
    const dv = new DataView(this.memory.buffer);
    const out = new Uint32Array(this.memory.buffer, MEM.outBase, k * 2);
    for (let m = 0; m < k; m++) {
      const id = out[2 * m + 1]!;
      if (id === MATCH_REFERENCE) continue;
      this.counters[id]!.matches++;
      if (!first) continue;
      const ids = this.slots.get(src === SRC.syscall ? dv.getUint32(rec + out[2 * m]! * stride, true) : 0) ?? [];
      for (let p = ids.indexOf(id) + 1; p < ids.length; p++) delta[ids[p]!]! -= 1;
    }
    let sample = this.sampleIn-- <= 0;
    const reached: number[] = [];
    for (let id = 0; id < delta.length; id++) {
      if (delta[id] === 0) continue;
      const c = this.counters[id]!;
      // a rule without a rate yet gets one from its first call
      sample ||= c.undersampled('wasm', 1);
      c.evaluated(delta[id]!, 'wasm');
      if (delta[id]! > 0) reached.push(id);
      delta[id] = 0;
    }
    if (sample) {
      this.sampleIn = this.sampleEvery - 1;
      this.sample(src, rec, n, stride, reached, dv);
    }
  }

  /** Times each reached rule alone over the events of its groups in this call. */
  private sample(src: number, rec: number, n: number, stride: number, reached: readonly number[], dv: DataView): void {
    const bySlot = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const slot = src === SRC.syscall ? dv.getUint32(rec + i * stride, true) : 0;
      if (!this.slots.has(slot)) continue;
      let l = bySlot.get(slot);
      if (!l) bySlot.set(slot, (l = []));
      l.push(i);
    }
    const idx = new Uint32Array(this.memory.buffer, MEM.outBase, MEM.outSize / 4);
    // The least of two runs: a run the machine preempted reads long, never short.
    const timed = (id: number, m: number): number => {
      if (!this.warm.has(id)) {
        this.warm.add(id);
        this.profileFn(id, rec, stride, MEM.outBase, m);
      }
      let best = Infinity;
      for (let r = 0; r < 2; r++) {
        const t0 = performance.now();
        this.profileFn(id, rec, stride, MEM.outBase, m);
        best = Math.min(best, performance.now() - t0);
      }
      return best / 1000;
    };
    // Lists are repeated up to MIN_TIMED entries: every entry is one evaluation (a new epoch).
    const list = (ls: ReadonlyArray<readonly number[] | undefined>): number => {
      let m = 0;
      const once = ls.reduce((s, l) => s + (l?.length ?? 0), 0);
      if (once === 0) return 0;
      const total = Math.min(idx.length, once * Math.ceil(MIN_TIMED / once));
      while (m + once <= total)
        for (const l of ls) {
          if (!l) continue;
          idx.set(l, m);
          m += l.length;
        }
      return m;
    };
    const all = list([...bySlot.values()]);
    if (all === 0) return;
    const timer = timed(-1, 0);
    const perEvent = Math.max(0, timed(-1, all) - timer) / all;
    for (const id of reached) {
      const m = list(this.slotsOf[id]!.map((slot) => bySlot.get(slot)));
      if (m === 0) continue;
      this.counters[id]!.sampled(timed(id, m) - timer - m * perEvent, m, 'wasm');
    }
  }

  private stride(src: number): number {
    return src === SRC.syscall ? this.generated.layouts.syscall.stride : this.generated.layouts.k8s_audit.stride;
  }
}
