// The compiled module's side of the rule figures (docs/rule-cost.md). Consumes the module's
// cumulative counters (`counts()`: u64 calls per rule group, u64 matches per (group, rule) pair),
// read only when figures are asked for (RuleStats.figures(): a scrape, `rae profile`) and on
// sampled calls, and the timings of sampled calls; produces per-rule evaluations, matches and
// cost in a RuleStats. Between two reads counting costs the host nothing: no work per event and,
// per evaluate call, one decrement (is this call sampled?).
// - Evaluations: a group's calls are added to each of its rules; under rule matching `first`, a
//   match at rule j stops its group, so the matches of the rules before a rule in the group are
//   taken from its calls. Exact for every event the module judged.
// - Cost: one evaluate call in `sampleEvery` is timed whole (two reads of the CPU clock). Its time minus
//   the per-event work done for all rules (the baseline loop) is the rules' time, which
//   calibrates the rates. Those come from `profile`, which runs a group of rules over the
//   events that reached it in a sampled call, whole and without each of its rules in turn (only
//   for a group not profiled yet, and for every reached group once in RESAMPLE_EVERY samples):
//   the whole group's time per call gives the estimate the calibration compares with, and the
//   group's time minus its time without a rule is that rule's rate, what removing it saves
//   (operands memoised per event and shared with other rules of the group are not in it). A
//   rule's cost is its evaluations × its rate × (measured rules' time / the groups' estimate of
//   it); the costs add up to less than the rules' time by the work the rules share.
import { MEM, SRC } from '../abi/module.js';
import type { GeneratedModule } from '../engine/codegen/index.js';
import type { RuleStats } from '../engine/index.js';

type RuleCounter = ReturnType<RuleStats['counter']>;
type ProfileFn = (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number) => number;

/** A profile times each group over at least this many calls (its events listed again as needed), so that the timer's resolution and call overhead stay small beside it. */
const MIN_TIMED = 1024;

/** Default: one evaluate call in 16 is timed whole (two clock reads and a read of the counters). */
const DEFAULT_SAMPLE_EVERY = 16;

/** One sampled call in this many profiles every group its events reached (each group about 4 × its rules times its share of the call): rates follow a changing workload. */
const RESAMPLE_EVERY = 64;

/** Each rule's sample is the fastest of this many (whole, without it) pairs (a run the machine slowed reads long, never short). */
const PROFILE_RUNS = 2;

/** Sampled calls whose ratios calibrate the rates (their median): about 64 × 16 recent calls. */
const CALIBRATION_WINDOW = 63;

/**
 * The process's CPU time, seconds: every timing of the figures is CPU time, which a machine
 * that takes the core away does not lengthen (on a loaded machine wall time is mostly waiting:
 * measured, runs of a few milliseconds read 10 to 15 times their CPU time at load 18 on 2
 * cores). It counts the process's other threads too (a compile worker, the garbage collector),
 * which the median calibration and the least of two runs keep out of most samples.
 */
export function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** 2^32, to read a u64 counter as two u32 halves (exact below 2^53). */
const HIGH = 4294967296;

/** Counts one module's rule figures into a RuleStats. */
export class ModuleTally {
  private readonly counters: RuleCounter[];
  /** rule id -> the counts() slots of its groups. */
  private readonly slotsOf: number[][];
  /** The counters as last read (u64 values as numbers). */
  private readonly seen: Float64Array;
  /** Evaluations and matches by rule id of the last read. */
  private readonly evals: Float64Array;
  private readonly hits: Float64Array;
  /** Calls of each counted group (by countSlots index) of the last read. */
  private readonly calls: Float64Array;
  /** Profiled time of each group's rules (by countSlots index), seconds, and the calls it covers: its rate per call. */
  private readonly groupSeconds: Float64Array;
  private readonly groupCalls: Float64Array;
  private readonly profileFn: ProfileFn;
  private readonly countsAt: number;
  private readonly flush = () => this.read();
  private sampleIn: number;
  private samples = 0;
  private first = true;
  private active = false;
  /**
   * Calibration: measured rules' time / the rates' estimate of it, one ratio per sampled call
   * (the last CALIBRATION_WINDOW), and their median. A median, not a sum: a call the machine
   * preempted reads many times too long (on a loaded machine a 1 ms call can read 50 ms), and
   * a few such calls would otherwise dominate the scale.
   */
  private readonly ratios: number[] = [];
  private ratioAt = 0;
  private scale = 1;
  /** Seconds of the per-event work done for all rules (the profile loop alone), from the last profile. */
  private perEvent = 0;
  /** Seconds of an empty profile call (the timer and the call). */
  private timer = 0;
  /** Profile loops (by group slot) called once already: the first call of a wasm function compiles it (lazy compilation), which must not be timed. */
  private readonly warm = new Set<number>();

  constructor(
    private readonly memory: WebAssembly.Memory,
    exports: WebAssembly.Exports,
    private readonly generated: GeneratedModule,
    private readonly stats: RuleStats,
    private readonly sampleEvery = DEFAULT_SAMPLE_EVERY,
  ) {
    this.counters = generated.rules.map((r) => stats.counter(r));
    this.slotsOf = generated.rules.map(() => []);
    for (const s of generated.countSlots) for (const id of s.rules) this.slotsOf[id]!.push(s.slot);
    this.seen = new Float64Array(generated.countWords);
    this.evals = new Float64Array(generated.rules.length);
    this.hits = new Float64Array(generated.rules.length);
    this.calls = new Float64Array(generated.countSlots.length);
    this.groupSeconds = new Float64Array(generated.countSlots.length);
    this.groupCalls = new Float64Array(generated.countSlots.length);
    this.profileFn = exports.profile as ProfileFn;
    this.countsAt = (exports.counts as () => number)();
    // whatever was counted before (warm-up batches) is not the rules' work
    this.collect();
    this.sampleIn = 0;
  }

  /** Before an evaluate call (`first`: rule matching first): whether to time it whole and call afterSampledCall. */
  beforeCall(first: boolean): boolean {
    if (!this.active) {
      // registered once the module evaluates (a module prepared and never installed is never read)
      this.active = true;
      this.stats.pending(this.flush);
    }
    this.first = first;
    if (this.sampleIn-- > 0 || !this.generated.counters) return false;
    this.sampleIn = this.sampleEvery - 1;
    // what came before this call is costed now, so the next read is this call's alone
    this.read();
    return true;
  }

  /**
   * After a sampled evaluate call over n records at rec that took `seconds` (its match records
   * already read: profiling writes over the match area): counts it, profiles rules as needed
   * and calibrates.
   */
  afterSampledCall(src: number, rec: number, n: number, seconds: number): void {
    this.collect();
    const reached: number[] = [];
    for (let g = 0; g < this.calls.length; g++) if (this.calls[g]! > 0) reached.push(g);
    if (reached.length === 0) return this.apply();
    const resample = this.samples++ % RESAMPLE_EVERY === 0;
    const unrated = resample ? reached : reached.filter((g) => this.groupCalls[g] === 0);
    if (unrated.length > 0) this.profile(src, rec, n, unrated);
    let estimate = 0;
    for (const g of reached) {
      // a group without a rate (its events were not in this call's records) leaves the ratio unknown
      if (this.groupCalls[g] === 0) return this.apply();
      estimate += (this.calls[g]! * this.groupSeconds[g]!) / this.groupCalls[g]!;
    }
    const rulesTime = seconds - this.timer - n * this.perEvent;
    if (estimate > 0) this.calibrate(Math.max(0, rulesTime) / estimate);
    this.apply();
  }

  /** The module is no longer the running one: its counts are read a last time and it leaves the RuleStats (until it runs again). */
  retire(): void {
    if (!this.active) return;
    this.read();
    this.active = false;
    this.stats.pending(this.flush, false);
  }

  /** Reads the counters and costs what changed since the last read. */
  private read(): void {
    this.collect();
    this.apply();
  }

  /** Adds one sampled call's ratio of measured to estimated rules' time; the scale is the median of the window. */
  private calibrate(ratio: number): void {
    if (this.ratios.length < CALIBRATION_WINDOW) this.ratios.push(ratio);
    else this.ratios[this.ratioAt++ % CALIBRATION_WINDOW] = ratio;
    const s = [...this.ratios].sort((a, b) => a - b);
    const m = s.length >> 1;
    this.scale = s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  }

  /** Reads the counters into evals and hits by rule: what changed since the last read. */
  private collect(): void {
    const words = new Uint32Array(this.memory.buffer, this.countsAt, this.seen.length * 2);
    const seen = this.seen;
    const delta = (w: number): number => {
      const v = words[2 * w]! + words[2 * w + 1]! * HIGH;
      const d = v - seen[w]!;
      seen[w] = v;
      return d;
    };
    this.evals.fill(0);
    this.hits.fill(0);
    this.generated.countSlots.forEach((g, gi) => {
      let calls = delta(g.slot);
      this.calls[gi] = calls;
      g.rules.forEach((id, p) => {
        const h = delta(g.hits + p);
        this.evals[id]! += calls;
        this.hits[id]! += h;
        // under `first` a match ends the group: the rules after it were not reached
        if (this.first) calls -= h;
      });
    });
  }

  /** Adds the last read's evaluations and matches to the rules' counters, costed at the current rates and calibration. */
  private apply(): void {
    const scale = this.scale;
    for (let id = 0; id < this.evals.length; id++) {
      const e = this.evals[id]!;
      if (e === 0 && this.hits[id] === 0) continue;
      const c = this.counters[id]!;
      c.evaluated(e, 'wasm', scale);
      c.matches += this.hits[id]!;
    }
  }

  /**
   * Times each group of `groups` (countSlots indexes) over its events in this call, whole and
   * without each of its rules, and the loop alone (the per-event baseline). The timings of one
   * group are pairs (whole, without rule 0, whole, without rule 1, ..., then again), so a change
   * of the machine's load or of V8's tier for the loop spoils one pair, not every rule's.
   */
  private profile(src: number, rec: number, n: number, groups: readonly number[]): void {
    const stride = src === SRC.syscall ? this.generated.layouts.syscall.stride : this.generated.layouts.k8s_audit.stride;
    const dv = new DataView(this.memory.buffer);
    const counted = new Set(this.generated.countSlots.map((g) => g.slot));
    const bySlot = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      const slot = src === SRC.syscall ? dv.getUint32(rec + i * stride, true) : 0;
      if (!counted.has(slot)) continue;
      let l = bySlot.get(slot);
      if (!l) bySlot.set(slot, (l = []));
      l.push(i);
    }
    const idx = new Uint32Array(this.memory.buffer, MEM.outBase, MEM.outSize / 4);
    const first = this.first ? 1 : 0;
    const run = (slot: number, skip: number, m: number): number => {
      if (!this.warm.has(slot)) {
        this.warm.add(slot);
        this.profileFn(slot, skip, first, rec, stride, MEM.outBase, m);
      }
      const t0 = cpuSeconds();
      this.profileFn(slot, skip, first, rec, stride, MEM.outBase, m);
      return cpuSeconds() - t0;
    };
    // Lists are repeated up to MIN_TIMED entries: every entry is one call of the group (a new epoch).
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
    let empty = Infinity;
    let loop = Infinity;
    for (let r = 0; r < PROFILE_RUNS; r++) {
      empty = Math.min(empty, run(-1, -1, 0));
      loop = Math.min(loop, run(-1, -1, all));
    }
    this.timer = empty;
    this.perEvent = Math.max(0, loop - empty) / all;
    const scale = this.scale;
    for (const gi of groups) {
      const g = this.generated.countSlots[gi]!;
      const m = list([bySlot.get(g.slot)]);
      if (m === 0) continue;
      // Each rule's sample is one adjacent pair (whole, then without it), the pair of the run
      // that took least in all: a step in between (V8 tiering the loop up, measured on the
      // first profiles: every rule of a group then read the same, the step) spoils one pair.
      let whole = Infinity;
      const pairs = g.rules.map(() => ({ sum: Infinity, diff: 0 }));
      for (let r = 0; r < PROFILE_RUNS; r++)
        g.rules.forEach((_, p) => {
          const w = run(g.slot, -1, m);
          const x = run(g.slot, p, m);
          whole = Math.min(whole, w);
          if (w + x < pairs[p]!.sum) pairs[p] = { sum: w + x, diff: w - x };
        });
      this.groupSeconds[gi]! += Math.max(0, whole - this.timer - m * this.perEvent);
      this.groupCalls[gi]! += m;
      // a difference of two timings: a rule cheaper than their noise may read below 0 this time
      g.rules.forEach((id, p) => this.counters[id]!.sampled(pairs[p]!.diff, m, 'wasm', scale));
    }
  }
}
