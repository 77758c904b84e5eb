// The compiled module's side of the rule figures (docs/rule-cost.md). Consumes the module's
// cumulative counters (`counts()`: u64 calls per rule group, u64 matches per (group, rule) pair),
// read only when figures are asked for (RuleStats.figures(): a scrape, `rae profile`) and on
// sampled calls, and the timings of sampled calls; produces per-rule evaluations, matches and
// cost in a RuleStats. Between two reads counting costs the host nothing: no work per event and,
// per evaluate call, one decrement (is this call sampled?).
// - Evaluations: a group's calls are added to each of its rules; under rule matching `first`, a
//   match at rule j stops its group, so the matches of the rules before a rule in the group are
//   taken from its calls. Exact for every event the module judged.
// - Cost: one evaluate call in `sampleEvery` on average, at random gaps, is timed whole (a
//   Stopwatch). Its time minus the per-event work done for all rules (the baseline loop) is the
//   rules' time, which calibrates the rates. Those come from `profile`, which runs a group of
//   rules over the events that reached it in a sampled call, whole and without each of its rules
//   in turn: at the group's first sampled call (cold code, discarded), at its next WARM_PROFILES
//   sampled calls that reach it, then once in RESAMPLE_EVERY; one sampled call carries at most
//   PROFILE_BUDGET seconds of profiles (at least one pair of runs), a profile under way goes on
//   at the group's next sampled calls and the groups due after it wait. The whole group's time per call gives the estimate the
//   calibration compares with, and the group's time minus its time without a rule is that rule's
//   leave-one-out rate in that group, what removing it saves; each rule is timed alone too. Rates
//   are medians of the group's last RATE_WINDOW warm profiles; the work the rules share (operands
//   memoised per event) is split between them in proportion to the shared work each uses (its
//   time alone less its leave-one-out rate), so a group's rates add up to its time. A
//   rule's cost is, over its groups, its evaluations in the group × its share rate there ×
//   (measured rules' time / the groups' estimate of it). Evaluations wait, uncosted, until the
//   calibration holds MIN_RATIOS ratios (a read for figures costs them at what there is).
import { EVT_TYPES, MEM, SRC } from '../abi/module.js';
import type { GeneratedModule } from '../engine/codegen/index.js';
import type { RuleStats } from '../engine/index.js';
import { Recent, Stopwatch } from './tally-clock.js';

type RuleCounter = ReturnType<RuleStats['counter']>;
/** The module's `profile` export (codegen module.ts profileExport). */
export type ProfileFn = (slot: number, skip: number, first: number, rec: number, stride: number, idx: number, m: number) => number;

/**
 * A profile times each group over at least this many calls (its events listed again as needed),
 * so that the timer's resolution and call overhead stay small beside it; under a budget, a
 * group's events in a call are thinned to between this many and twice as many. At 1,024 (and
 * lists of 1,024 to 2,048 under a budget) the profiles were about half of counting's cost on the
 * stable rules (2.2 to 3.0 % of the evaluation time in the rule-cost bench).
 */
const MIN_TIMED = 512;

/** Default: one evaluate call in 16 on average is timed whole (two clock reads and a read of the counters), at random gaps of 1 to 31 calls. */
const DEFAULT_SAMPLE_EVERY = 16;

/**
 * After its warm-up, a group is profiled again once in this many sampled calls (each profile
 * about 6 × its rules times its share of the call, and each rule's runs alone), so rates follow a changing workload. A
 * profile of the stable rules took about a third of a round of the rule-cost bench (192 calls of
 * 4,096 events): once in 64 sampled calls (1,024 calls) that alone was about 6 % of the
 * evaluation time; once in 256 sampled calls (4,096 calls) it is under 3 %. The calibration (the
 * median of the last 63 sampled calls) follows the total meanwhile.
 */
const RESAMPLE_EVERY = 256;

/**
 * Warm profiles of a group right after its cold first one, each due at the next sampled call that
 * reaches the group (the profiling budget spreads them over the groups): its rates are the median
 * of this many from the start. One profile's leave-one-out samples are noisy (measured on the
 * stable rules' `openat` group, a busy machine: the first rule's sample read 18 to 22 ns in most
 * profiles and 30 to 130 in one in three); with five, the top rule's predicted share still moved
 * between runs of the same build (24.8 % and 31.8 % in two quiet runs).
 */
const WARM_PROFILES = 9;

/** Each rule's sample is the fastest of this many (whole, without it) pairs (a run the machine slowed reads long, never short). */
const PROFILE_RUNS = 3;

/**
 * Seconds of profiling one evaluate call may carry (sampleEvery > 1, an engine): checked after
 * each pair of runs, the profile under way goes on at later sampled calls and further groups
 * wait once it is spent. Profiling every group a call reached at once (a new module's first
 * sampled calls profile each group cold, then warm) put tens of milliseconds on one batch: the
 * first batch after a hot swap read 42.8 ms against 6.5 before the tally (the eval bench); checked
 * between groups only, one group's whole profile (the stable rules' `openat` group, 15 to 80 ms
 * while the worker compiled) still landed on one batch. With every call
 * sampled (`rae profile`, a replay) nothing waits on a batch and the profiles are not bounded,
 * so a short replay gets every group's rates.
 */
const PROFILE_BUDGET = 0.002;

/** Sampled calls whose ratios calibrate the rates (their median): about 64 × 16 recent calls. */
const CALIBRATION_WINDOW = 63;

/** A group's rates are the median of its last this many warm profiles: a profile the machine spoiled is outvoted. */
const RATE_WINDOW = WARM_PROFILES;

/**
 * Ratios the calibration needs before anything is costed (but at a read for figures). The first evaluate
 * calls run code V8 has not optimised (compiled at its first call, baseline tier first):
 * measured on the stable rules, they read 8 to 20 times a warm call, and while the median of so
 * few ratios was one of them, every rule's cost was charged at that scale (in the rule-cost
 * bench's warm-up, the costs of the first 64 calls weighed as much as the next 300).
 */
const MIN_RATIOS = 8;

/**
 * How a group's time is attributed to its rules (docs/rule-cost.md), from the same profiles:
 * - `loo`: what removing the rule alone saves (its leave-one-out rate); the work the group's
 *   rules share (operands memoised per event) is nobody's and is counted apart per group;
 * - `rates`: leave-one-out rates scaled up so that they add up to the group's time (the shared
 *   work split in proportion to what removing each rule saves);
 * - `use`: leave-one-out rate plus a part of the shared work in proportion to the shared work
 *   the rule uses (its time alone less its leave-one-out rate).
 */
export type Attribution = 'loo' | 'rates' | 'use';
const ATTRIBUTIONS: readonly Attribution[] = ['loo', 'rates', 'use'];
/** The attribution of the RuleStats' costs (/metrics, `rae profile`); the others are kept beside it (`attributed()`). */
const FIGURES: Attribution = 'use';

/** How a tally samples and profiles (the defaults are an engine's). */
interface TallyOptions {
  /** Calls between two sampled calls: uniform in 1 .. 2 × sampleEvery - 1 (mean sampleEvery); default 16. */
  sampleEvery?: number;
  /** Seconds of profiling one sampled call may carry (PROFILE_BUDGET; unbounded when every call is sampled). */
  profileBudget?: number;
  /** The random source of the gaps (uniform in [0, 1)); default Math.random. */
  random?: () => number;
  /** While true (the engine's compile worker builds), due profiles wait; sampled calls still count and calibrate (docs/rule-cost.md). */
  holdProfiles?: () => boolean;
}

/** A counted group's name: its event type (slot = the type's id), the audit group (slot 0) `k8s_audit`. */
function groupName(slot: number): string {
  return slot === 0 ? 'k8s_audit' : (EVT_TYPES[slot - 1] ?? String(slot));
}

/** 2^32, to read a u64 counter as two u32 halves (exact below 2^53). */
const HIGH = 4294967296;

/** Counts one module's rule figures into a RuleStats. */
export class ModuleTally {
  private readonly counters: RuleCounter[];
  /** The (group, rule) pairs, flat: the pairs of countSlots[gi] start at pairBase[gi]; pairRule holds their rule ids. */
  private readonly pairBase: number[] = [];
  private readonly pairRule: number[] = [];
  /** The counters as last read (u64 values as numbers). */
  private readonly seen: Float64Array;
  /** Evaluations by pair and matches by rule id of the last read. */
  private readonly pairEvals: Float64Array;
  private readonly hits: Float64Array;
  /** Each pair's leave-one-out samples (seconds per evaluation): what removing the rule saves in that group. */
  private readonly pairRates: Recent[];
  /** Each pair's samples of the rule run alone over the group's events (seconds per evaluation). */
  private readonly pairAlone: Recent[];
  /** Each pair's rate (seconds per evaluation) by attribution, from the last profile of its group. */
  private readonly rateBy: Record<Attribution, Float64Array>;
  /** Each group's shared work per call (its time less its rules' leave-one-out rates, at least 0), and its cost so far (the `loo` attribution's remainder). */
  private readonly sharedRate: Float64Array;
  private readonly sharedCost: Float64Array;
  /** Cost so far by attribution and rule id, seconds. */
  private readonly costBy: Record<Attribution, Float64Array>;
  /** Evaluations of each pair waiting for its group's first profile to be costed. */
  private readonly uncosted: Float64Array;
  /** Calls of each counted group (by countSlots index) of the last read. */
  private readonly calls: Float64Array;
  /** Each group's profiled rules' time per call, seconds (the estimate the calibration compares with). */
  private readonly groupRates: Recent[];
  /** Each pair's group (countSlots index). */
  private readonly pairGroup: number[] = [];
  /** Where the counters are in `counts()` (u64 indexes): each group's calls, each pair's matches. */
  private readonly groupWord: Int32Array;
  private readonly pairWord: Int32Array;
  /** A view of the counters, made again only when the module's memory grew (a new buffer). */
  private words: Uint32Array;
  /** Profiles of each group so far (the first one cold), and the sampled call from which it is due again. */
  private readonly profiles: Uint32Array;
  private readonly due: Float64Array;
  /**
   * A profile under way, by group: its pair steps done (0: none under way), the least whole run
   * so far and each pair's least (whole + without) and its difference, seconds per call of the
   * group. A profile may span several sampled calls (see PROFILE_BUDGET), each over its own events.
   */
  private readonly steps: Uint32Array;
  private readonly wholeSoFar: Float64Array;
  private readonly pairSum: Float64Array;
  private readonly pairDiff: Float64Array;
  private readonly aloneSoFar: Float64Array;
  private readonly profileFn: ProfileFn;
  private readonly countsAt: number;
  /** A read for figures (a scrape, `rae profile`): what waits for the calibration is costed at what there is. */
  private readonly flush = () => this.read(true);
  private sampleIn: number;
  private readonly sampleEvery: number;
  private readonly budget: number;
  private readonly holdProfiles: () => boolean;
  private readonly random: () => number;
  private samples = 0;
  private first = true;
  private active = false;
  /** Times each run of a profile. */
  private readonly watch = new Stopwatch();
  /** Times a whole profile: its own, since `watch` restarts at every run inside it. */
  private readonly profileWatch = new Stopwatch();
  /**
   * Calibration: measured rules' time / the rates' estimate of it, one ratio per sampled call
   * (the last CALIBRATION_WINDOW), and their median. A median, not a sum: a call the machine
   * preempted reads many times too long (on a loaded machine a 1 ms call can read 50 ms), and
   * a few such calls would otherwise dominate the scale.
   */
  private readonly ratios = new Recent(CALIBRATION_WINDOW);
  private scale = 1;
  /** Seconds of the per-event work done for all rules (the profile loop alone), from the last profile. */
  private perEvent = 0;
  /** Seconds of an empty profile call (the timer and the call). */
  private timer = 0;
  /** Profile loops (by group slot; -2 - slot: the group's loop of one rule alone) called once already: the first call of a wasm function compiles it (lazy compilation), which must not be timed. */
  private readonly warm = new Set<number>();
  /** Seconds the profiles took so far, untimed runs included: the part of counting's cost that comes in bursts, once in many calls. */
  private profiling = 0;

  constructor(
    private readonly memory: WebAssembly.Memory,
    exports: WebAssembly.Exports,
    private readonly generated: GeneratedModule,
    private readonly stats: RuleStats,
    options: TallyOptions = {},
  ) {
    this.sampleEvery = Math.max(1, Math.round(options.sampleEvery ?? DEFAULT_SAMPLE_EVERY));
    this.budget = options.profileBudget ?? (this.sampleEvery > 1 ? PROFILE_BUDGET : Number.POSITIVE_INFINITY);
    this.random = options.random ?? Math.random;
    this.holdProfiles = options.holdProfiles ?? (() => false);
    this.counters = generated.rules.map((r) => stats.counter(r));
    generated.countSlots.forEach((g, gi) => {
      this.pairBase.push(this.pairRule.length);
      this.pairRule.push(...g.rules);
      for (const _ of g.rules) this.pairGroup.push(gi);
    });
    this.groupWord = Int32Array.from(generated.countSlots, (g) => g.slot);
    this.pairWord = Int32Array.from(generated.countSlots.flatMap((g) => g.rules.map((_, p) => g.hits + p)));
    this.seen = new Float64Array(generated.countWords);
    this.pairEvals = new Float64Array(this.pairRule.length);
    this.hits = new Float64Array(generated.rules.length);
    this.pairRates = this.pairRule.map(() => new Recent(RATE_WINDOW));
    this.pairAlone = this.pairRule.map(() => new Recent(RATE_WINDOW));
    const perMode = (n: number) => Object.fromEntries(ATTRIBUTIONS.map((a) => [a, new Float64Array(n)])) as Record<Attribution, Float64Array>;
    this.rateBy = perMode(this.pairRule.length);
    this.costBy = perMode(generated.rules.length);
    this.sharedRate = new Float64Array(generated.countSlots.length);
    this.sharedCost = new Float64Array(generated.countSlots.length);
    this.uncosted = new Float64Array(this.pairRule.length);
    this.calls = new Float64Array(generated.countSlots.length);
    this.groupRates = generated.countSlots.map(() => new Recent(RATE_WINDOW));
    this.profiles = new Uint32Array(generated.countSlots.length);
    this.due = new Float64Array(generated.countSlots.length);
    this.steps = new Uint32Array(generated.countSlots.length);
    this.wholeSoFar = new Float64Array(generated.countSlots.length);
    this.pairSum = new Float64Array(this.pairRule.length);
    this.pairDiff = new Float64Array(this.pairRule.length);
    this.aloneSoFar = new Float64Array(this.pairRule.length);
    this.profileFn = exports.profile as ProfileFn;
    this.countsAt = (exports.counts as () => number)();
    this.words = new Uint32Array(memory.buffer, this.countsAt, generated.countWords * 2);
    // whatever was counted before (warm-up batches) is not the rules' work
    this.collect();
    // the first sampled call falls at a random gap too: a new module's first call (cold code) is sampled no more often than any other
    this.sampleIn = this.gap() - 1;
  }

  /**
   * Calls from one sampled call to the next: uniform in 1 .. 2 × sampleEvery - 1, mean
   * sampleEvery. A fixed period puts every sample at the same phase of whatever repeats in the
   * caller: the rule-cost bench ran 16 consecutive batches per module turn, so with one call in 16
   * sampled, every sampled call was a turn's first (cold caches, 1.5 to 1.8 times a warm call),
   * which inflated the calibration and so every cost. At random gaps a sampled call is any call.
   */
  private gap(): number {
    return 1 + Math.floor(this.random() * (2 * this.sampleEvery - 1));
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
    this.sampleIn = this.gap() - 1;
    // what came before this call is costed now, so the next read is this call's alone
    this.read();
    return true;
  }

  /**
   * After a sampled evaluate call over n records at rec that took `seconds` (its match records
   * already read: profiling writes over the match area): counts, profiles as due and calibrates.
   */
  afterSampledCall(src: number, rec: number, n: number, seconds: number): void {
    this.collect();
    const { calls, due } = this;
    let reached = false;
    let dueNow = false;
    for (let g = 0; g < calls.length; g++)
      if (calls[g]! > 0) {
        reached = true;
        if (this.samples >= due[g]!) dueNow = true;
      }
    if (!reached) return this.apply();
    const sample = this.samples++;
    // most sampled calls profile nothing: the list of groups due is made only when one is
    if (dueNow && !this.holdProfiles()) {
      const groups: number[] = [];
      for (let g = 0; g < calls.length; g++) if (calls[g]! > 0 && sample >= due[g]!) groups.push(g);
      // a profile under way first, then the most overdue (a group never profiled is due from 0), then the one this call reached most
      const underWay = (g: number) => (this.steps[g]! > 0 ? 0 : 1);
      groups.sort((a, b) => underWay(a) - underWay(b) || due[a]! - due[b]! || calls[b]! - calls[a]!);
      this.profileWatch.start();
      this.profile(src, rec, n, groups, sample);
      this.profiling += this.profileWatch.seconds();
    }
    let estimate = 0;
    for (let g = 0; g < calls.length; g++) {
      if (calls[g]! === 0) continue;
      // a group without a warm rate (cold, or its events were not in a profiled call) leaves the ratio unknown
      const rate = this.groupRates[g]!.median;
      if (rate === undefined) return this.apply();
      estimate += calls[g]! * rate;
    }
    const rulesTime = seconds - this.timer - n * this.perEvent;
    if (estimate > 0) {
      this.ratios.add(Math.max(0, rulesTime) / estimate);
      this.scale = this.ratios.median!;
    }
    this.apply();
  }

  /** Seconds this tally's profiles took so far (inside sampled evaluate calls' afterSampledCall). */
  get profileSeconds(): number {
    return this.profiling;
  }

  /** The module is no longer the running one: its counts are read a last time and it leaves the RuleStats (until it runs again). */
  retire(): void {
    if (!this.active) return;
    this.read();
    this.active = false;
    this.stats.pending(this.flush, false);
  }

  /** Reads the counters and costs what changed since the last read (`force`: see apply). */
  private read(force = false): void {
    this.collect();
    this.apply(force);
  }

  /**
   * Reads the counters into calls, pairEvals and hits: what changed since the last read. Twice
   * per sampled call, so plain loops over typed arrays: with a closure per counter and a view
   * made at each read, the host's work per sampled call took twice as long (docs/rule-cost.md).
   */
  private collect(): void {
    if (this.words.buffer !== this.memory.buffer) this.words = new Uint32Array(this.memory.buffer, this.countsAt, this.seen.length * 2);
    const { words, seen, calls, pairEvals, hits, pairWord, pairRule } = this;
    hits.fill(0);
    for (let gi = 0; gi < calls.length; gi++) {
      const g = this.groupWord[gi]!;
      const v = words[2 * g]! + words[2 * g + 1]! * HIGH;
      let c = v - seen[g]!;
      seen[g] = v;
      calls[gi] = c;
      const end = gi + 1 < calls.length ? this.pairBase[gi + 1]! : pairRule.length;
      for (let k = this.pairBase[gi]!; k < end; k++) {
        const w = pairWord[k]!;
        const hv = words[2 * w]! + words[2 * w + 1]! * HIGH;
        const h = hv - seen[w]!;
        seen[w] = hv;
        pairEvals[k] = c;
        hits[pairRule[k]!]! += h;
        // under `first` a match ends the group: the rules after it were not reached
        if (this.first) c -= h;
      }
    }
  }

  /**
   * Adds the last read's evaluations and matches to the rules' counters, each pair's evaluations
   * costed at its current rate and the calibration; before the calibration holds MIN_RATIOS
   * ratios they wait uncosted, and are costed with the first evaluations after, or at a read for
   * figures (`force`) at the rates and scale there are (a short replay never has more; before
   * the first ratio the scale is 1, the profiles' own timings).
   */
  private apply(force = false): void {
    const calibrated = force || this.ratios.count >= MIN_RATIOS;
    const { pairEvals, uncosted, rateBy, costBy } = this;
    for (let k = 0; k < pairEvals.length; k++) {
      const e = pairEvals[k]!;
      const waiting = uncosted[k]!;
      if (e === 0 && waiting === 0) continue;
      const id = this.pairRule[k]!;
      const counter = this.counters[id]!;
      if (!calibrated || this.pairRates[k]!.median === undefined) {
        uncosted[k] = waiting + e;
        counter.costed(e, 0);
        continue;
      }
      uncosted[k] = 0;
      const n = (e + waiting) * this.scale;
      for (const a of ATTRIBUTIONS) costBy[a][id]! += n * rateBy[a][k]!;
      counter.costed(e, n * rateBy[FIGURES][k]!);
      // a group's first rule is evaluated at every call of the group: its evaluations are the group's calls
      const gi = this.pairGroup[k]!;
      if (this.pairBase[gi] === k) this.sharedCost[gi]! += n * this.sharedRate[gi]!;
    }
    for (let id = 0; id < this.hits.length; id++) if (this.hits[id] !== 0) this.counters[id]!.matches += this.hits[id]!;
  }

  /**
   * Group `gi`'s rates by attribution, from the medians of its profiles. Leave-one-out leaves out
   * the work a group's rules share (an operand memoised per event: removing one rule, another
   * computes it), so the rates add up to less than the group's time: measured on the stable
   * rules, "Read sensitive file trusted after startup" and "Read sensitive file untrusted" saved
   * 6.6 % and 8.0 % removed alone, 19.1 % together. `loo` keeps the rates and counts that
   * remainder apart; `rates` scales them to the group's time; `use` adds to each rate a part of
   * the remainder in proportion to the shared work the rule uses (its time alone less its rate),
   * so a rule that uses little of the shared work is charged little of it. A group whose rates
   * add up to more than its time (noise) is scaled down in both.
   */
  private attribute(gi: number): void {
    const base = this.pairBase[gi]!;
    const k = this.generated.countSlots[gi]!.rules.length;
    const whole = Math.max(0, this.groupRates[gi]!.median ?? 0);
    // removing a rule saves at most what it costs alone (what it computes is memoised for the
    // rules after it), so a leave-one-out rate above it is the timings' noise: on the stable rules
    // a group's last rule read 12.8 ns saved against 7.1 alone (4 timing the group 50 times over)
    const alone = (p: number) => this.pairAlone[base + p]!.median ?? Number.POSITIVE_INFINITY;
    const loo = (p: number) => Math.max(0, Math.min(this.pairRates[base + p]!.median ?? 0, alone(p)));
    const uses = (p: number) => (Number.isFinite(alone(p)) ? Math.max(0, alone(p) - loo(p)) : 0);
    let sum = 0;
    let used = 0;
    for (let p = 0; p < k; p++) {
      sum += loo(p);
      used += uses(p);
    }
    const shared = whole - sum;
    const scaled = sum > 0 && whole > 0 ? whole / sum : 1;
    this.sharedRate[gi] = Math.max(0, shared);
    for (let p = 0; p < k; p++) {
      this.rateBy.loo[base + p] = loo(p);
      this.rateBy.rates[base + p] = loo(p) * scaled;
      this.rateBy.use[base + p] = shared > 0 && used > 0 ? loo(p) + (shared * uses(p)) / used : loo(p) * scaled;
    }
  }

  /**
   * Cost so far by attribution and rule (seconds; everything counted is costed first, at the
   * rates and scale there are) and, under `loo`, each group's shared work by its event type.
   */
  attributed(): { costs: Record<Attribution, Map<string, number>>; shared: Map<string, number> } {
    this.read(true);
    const costs = Object.fromEntries(ATTRIBUTIONS.map((a) => [a, new Map<string, number>()])) as Record<Attribution, Map<string, number>>;
    for (const a of ATTRIBUTIONS) this.generated.rules.forEach((r, id) => costs[a].set(r.name, (costs[a].get(r.name) ?? 0) + this.costBy[a][id]!));
    const shared = new Map<string, number>();
    this.generated.countSlots.forEach((g, gi) => shared.set(groupName(g.slot), this.sharedCost[gi]!));
    return { costs, shared };
  }

  /**
   * Times each group of `groups` (countSlots indexes) over its events in this call, whole and
   * without each of its rules, and the loop alone (the per-event baseline). A group's timings
   * follow one untimed run of it, and are pairs (whole, without rule 0, whole, without rule 1,
   * ..., then again in the reverse order), so a change of the machine's load or of V8's tier for
   * the loop spoils one pair, not every rule's. A group's first profile (cold code) is replaced by
   * its first warm one.
   */
  private profile(src: number, rec: number, n: number, groups: readonly number[], sample: number): void {
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
      // a rule alone runs the group's other loop (another function to compile)
      const fn = skip < -1 ? -2 - slot : slot;
      if (!this.warm.has(fn)) {
        this.warm.add(fn);
        this.profileFn(slot, skip, first, rec, stride, MEM.outBase, m);
      }
      this.watch.start();
      this.profileFn(slot, skip, first, rec, stride, MEM.outBase, m);
      return this.watch.seconds();
    };
    // Lists are repeated up to MIN_TIMED entries: every entry is one call of the group (a new
    // epoch). Under a budget, a longer list is thinned to every so many event, MIN_TIMED to twice
    // that (the step rounded down, so a thinned list needs no repeating: rounded up, 1,500 events
    // became 750 listed twice): a run over a batch's `openat` events took 0.7 ms on a busy
    // machine, too coarse a step for the budget; the rates are per call either way.
    const thin = (l: readonly number[] | undefined, every: number) => (every > 1 ? l?.filter((_, i) => i % every === 0) : l);
    const list = (lists: ReadonlyArray<readonly number[] | undefined>): number => {
      let m = 0;
      const count = (ls: ReadonlyArray<readonly number[] | undefined>) => ls.reduce((s, l) => s + (l?.length ?? 0), 0);
      const every = Number.isFinite(this.budget) ? Math.max(1, Math.floor(count(lists) / MIN_TIMED)) : 1;
      const ls = lists.map((l) => thin(l, every));
      const once = count(ls);
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
    let done = 0;
    const spent = () => this.profileWatch.seconds() >= this.budget;
    for (const gi of groups) {
      if (done > 0 && spent()) break;
      const slot = this.generated.countSlots[gi]!.slot;
      const m = list([bySlot.get(slot)]);
      if (m === 0) continue;
      // The group's first run over a call's events reads its records and branches cold: measured
      // on the stable rules' `openat` group, 1.6 to 3 times the next runs (213 to 422 µs against
      // 137), which the first pair timed would carry.
      this.profileFn(slot, -1, first, rec, stride, MEM.outBase, m);
      done += this.profileSteps(gi, m, run, spent, sample);
    }
  }

  /**
   * Times pairs of group `gi`'s profile over this call's m listed events (`run`), from where the
   * profile stands, until it is whole or the call's budget is `spent` (at least one pair). Each
   * rule's sample is one adjacent pair (whole, then without it), the pair that took least in
   * all: a step in between (V8 tiering the loop up, a run after a rule's branches were left out)
   * spoils one pair; the second round runs the rules in reverse, so no rule's pairs always follow
   * the same run. Timings are per call of the group (÷ m), since a profile's pairs may come from
   * different sampled calls. A profile made whole is finished (sampled call `sample`). Returns
   * the pairs timed.
   */
  private profileSteps(gi: number, m: number, run: (slot: number, skip: number, m: number) => number, spent: () => boolean, sample: number): number {
    const g = this.generated.countSlots[gi]!;
    const k = g.rules.length;
    const base = this.pairBase[gi]!;
    // one run's time per call of the group, less the timer and the loop's own per-event work
    const perCall = (skip: number) => (run(g.slot, skip, m) - this.timer) / m - this.perEvent;
    if (this.steps[gi] === 0) {
      this.wholeSoFar[gi] = Infinity;
      this.pairSum.fill(Infinity, base, base + k);
      this.aloneSoFar.fill(Infinity, base, base + k);
    }
    let timed = 0;
    while (this.steps[gi]! < PROFILE_RUNS * k && !(timed > 0 && spent())) {
      const step = this.steps[gi]!;
      const i = step % k;
      const p = Math.floor(step / k) % 2 === 0 ? i : k - 1 - i;
      const w = perCall(-1);
      const x = perCall(p);
      this.wholeSoFar[gi] = Math.min(this.wholeSoFar[gi]!, w);
      if (w + x < this.pairSum[base + p]!) {
        this.pairSum[base + p] = w + x;
        this.pairDiff[base + p] = w - x;
      }
      // the rule alone (its time less its leave-one-out saving: the shared work it uses)
      this.aloneSoFar[base + p] = Math.min(this.aloneSoFar[base + p]!, perCall(-2 - p));
      this.steps[gi] = step + 1;
      timed++;
    }
    if (this.steps[gi] === PROFILE_RUNS * k) this.finishProfile(gi, sample);
    return timed;
  }

  /** Group `gi`'s profile is whole: its rates take its samples, and it is due again (sampled call `sample`). */
  private finishProfile(gi: number, sample: number): void {
    const g = this.generated.countSlots[gi]!;
    this.steps[gi] = 0;
    // warm profiles so far (-1: this was the cold first one), then when the group is due again
    const warmed = this.profiles[gi]++ - 1;
    this.due[gi] = sample + (warmed < WARM_PROFILES - 1 ? 1 : RESAMPLE_EVERY);
    const base = this.pairBase[gi]!;
    const pairs = g.rules.map((_, p) => this.pairRates[base + p]!);
    const alone = g.rules.map((_, p) => this.pairAlone[base + p]!);
    // the first warm profile replaces the cold one (kept till then: a short replay has no other)
    if (warmed === 0) for (const r of [this.groupRates[gi]!, ...pairs, ...alone]) r.clear();
    this.groupRates[gi]!.add(Math.max(0, this.wholeSoFar[gi]!));
    // a difference of two timings: a rule cheaper than their noise may read below 0 this time
    pairs.forEach((r, p) => r.add(this.pairDiff[base + p]!));
    alone.forEach((r, p) => r.add(this.aloneSoFar[base + p]!));
    this.attribute(gi);
  }
}
