// The sandboxed evaluator: one instance of a checked rule module, fed batches of events. A batch
// is encoded into the module's batch region (or already sits there, for byte sources), judged
// by one `evaluate` call per chunk, and its matches read back from the match buffer. A trap fails
// that batch (an error value, never an exception); with a watchdog deadline, each evaluate call
// runs under watchdog.ts (the native one-thread watchdog, or vm's timeout as a fallback), which
// interrupts wasm too (reference/wasm-evaluator-notes.md §6). Values are compared whole: an
// event too large for the batch area on its own, or one the module hands back because its
// transformer results do not fit the scratch area, is judged by the reference interpreter over
// the same rules (reference.ts) and reported in the result, never skipped.
import type { GeneratedModule } from '../engine/codegen/index.js';
import type { LoadedRule, RuleStats, SourceEvent } from '../engine/index.js';
import { MATCH_REFERENCE, MATCH_SIZE, MEM, SRC, STATE, THREAD } from '../abi/module.js';
import { BatchEncoder, type Encoded } from './encode.js';
import { runtimeError, type RuntimeError } from './errors.js';
import { ReferenceJudge, type Referred } from './reference.js';
import { ModuleTally } from './rule-tally.js';
import { Stopwatch } from './tally-clock.js';
import { checkInstance, checkModule } from './validate.js';
import { guardedCall, isWatchdogTimeout } from './watchdog.js';
import { fillSynthetic, type WarmPlan } from './warm.js';

/** A compiled, checked ruleset: what the compile worker hands over. */
export interface CompiledRuleset {
  generated: GeneratedModule;
  module: WebAssembly.Module;
  wasm: Uint8Array;
  /** Generation + compile time in the worker (ms). */
  compileMs: number;
  /** Time spent warming the module in the worker (ms). */
  warmMs: number;
}

/** One (event, rule) match; `event` indexes the evaluated batch. */
export interface Match {
  event: number;
  rule: LoadedRule;
}

/**
 * Outcome of one batch. `referred`: events judged by the reference interpreter instead (their
 * matches are in `matches`); `handBack` (evaluateRecords only): events the module could not judge
 * whole, for the caller to judge with judgeByReference() (it holds their SourceEvents).
 */
export type BatchResult = { ok: true; matches: Match[]; referred?: Referred[]; handBack?: number[] } | { ok: false; error: RuntimeError };

type EvaluateFn = (src: number, rec: number, n: number, first: number, out: number, cap: number) => number;

/** Most records encoded per evaluate call (keeps the heap room for strings). */
const CHUNK = 8192;
const OUT_CAP = MEM.outSize / MATCH_SIZE;

/** A live instance of a rule module. */
export class RuleModule {
  readonly memory: WebAssembly.Memory;
  private readonly evaluateFn: EvaluateFn;
  private readonly resumeAt: () => number;
  private readonly encoders: { syscall: BatchEncoder; k8s_audit: BatchEncoder };
  private reference: ReferenceJudge | undefined;
  private tally: ModuleTally | undefined;
  /** Times the sampled evaluate calls of the rule figures (rule-tally.ts). */
  private readonly watch = new Stopwatch();

  private constructor(
    readonly compiled: CompiledRuleset,
    private readonly instance: WebAssembly.Instance,
    readonly watchdogMs: number,
  ) {
    const ex = instance.exports;
    this.memory = ex.memory as WebAssembly.Memory;
    this.evaluateFn = ex.evaluate as EvaluateFn;
    this.resumeAt = ex.resumeAt as () => number;
    const g = compiled.generated;
    this.encoders = { syscall: new BatchEncoder(g.layouts.syscall, g.threadUse, g.containerKeys), k8s_audit: new BatchEncoder(g.layouts.k8s_audit, { bases: [], levels: 0, walk: false }) };
  }

  /** Checks and instantiates a compiled ruleset (zero imports, so nothing of the host is reachable). */
  static create(compiled: CompiledRuleset, watchdogMs = 0): { ok: true; module: RuleModule } | { ok: false; error: RuntimeError } {
    const bad = checkModule(compiled.module, compiled.wasm);
    if (bad) return { ok: false, error: bad };
    let instance: WebAssembly.Instance;
    try {
      instance = new WebAssembly.Instance(compiled.module, {});
    } catch (err) {
      return { ok: false, error: runtimeError('EWASM', `module refused: it cannot be instantiated: ${(err as Error).message}`) };
    }
    const badInstance = checkInstance(instance.exports);
    if (badInstance) return { ok: false, error: badInstance };
    return { ok: true, module: new RuleModule(compiled, instance, watchdogMs) };
  }

  /**
   * Counts every rule's evaluations, matches and sampled cost into `stats` from now on (call
   * after warmUp: what was evaluated before is not counted); the counts stay in the module's
   * memory until `stats` is read; `sampleEvery`: one evaluate call in this many, on average
   * (at random gaps), is timed whole (rule-tally.ts); `holdProfiles`: profiles wait while it
   * returns true (a compile is under way).
   */
  countInto(stats: RuleStats, sampleEvery?: number, holdProfiles?: () => boolean): void {
    const ex = this.instance.exports;
    this.tally = new ModuleTally(this.memory, ex, this.compiled.generated, stats, { sampleEvery, holdProfiles });
  }

  /** The rule figures' cost so far under every attribution, and the work shared within each group (rule-tally.ts; undefined without countInto): the rule-cost bench compares them in one run. */
  attributedCosts(): ReturnType<ModuleTally['attributed']> | undefined {
    return this.tally?.attributed();
  }

  /** CPU seconds the rule figures' profiles took so far in this module's evaluate calls (0 without countInto): counting's cost in bursts, which the rule-cost bench adds to its steady cost. */
  get profileSeconds(): number {
    return this.tally?.profileSeconds ?? 0;
  }

  /** The rules, by the ids in match records. */
  get rules(): readonly LoadedRule[] {
    return this.compiled.generated.rules;
  }

  /**
   * Commits the pages of the batch, match and scratch areas ahead of use, in slices, yielding
   * between them: a fresh memory's first touch costs 10-15 ms on the first batch otherwise.
   */
  async pretouch(bytes = 8 * 2 ** 20, slice = 2 ** 20): Promise<void> {
    const u8 = new Uint8Array(this.memory.buffer);
    const areas: Array<[number, number]> = [
      [MEM.batchBase, bytes],
      [MEM.outBase, 2 ** 18],
      [MEM.scratchBase, 2 ** 16],
    ];
    for (const [base, size] of areas) {
      for (let off = 0; off < size; off += slice) {
        u8.fill(0, base + off, base + Math.min(size, off + slice));
        await new Promise((r) => setImmediate(r));
      }
    }
  }

  /**
   * A few synthetic batches through this instance on this thread, each in its own macrotask:
   * the first call into a new instance (wrappers, watchdog path) otherwise costs 5-7 ms on the
   * first real batch even when the worker has tiered the code up.
   */
  async warmUp(plan: WarmPlan, rounds = 4, n = 1024): Promise<void> {
    const u8 = new Uint8Array(this.memory.buffer);
    const dv = new DataView(this.memory.buffer);
    const sources = [
      ['syscall', plan.syscallStride, plan.typeIds],
      ['k8s_audit', plan.auditStride, []],
    ] as const;
    // a 64-event probe first: batches are sized to take about 10 ms each on this (the main) thread
    const size = new Map<string, number>();
    for (const [source, stride, types] of sources) {
      fillSynthetic(u8, dv, stride, 64, [...types]);
      const t0 = performance.now();
      this.evaluateRecords(source, 64, true);
      size.set(source, Math.max(64, Math.min(n, Math.floor((64 * 10) / Math.max(performance.now() - t0, 0.01)))));
    }
    await new Promise((res) => setImmediate(res));
    for (let r = 0; r < rounds; r++) {
      for (const [source, stride, types] of sources) {
        const m = size.get(source)!;
        fillSynthetic(u8, dv, stride, m, [...types]);
        this.evaluateRecords(source, m, r % 2 === 0);
      }
      await new Promise((res) => setImmediate(res));
    }
    u8.fill(0, MEM.batchBase, MEM.batchBase + Math.max(plan.syscallStride, plan.auditStride) * n + 256);
  }

  /**
   * Copies the used part of the persistent state region from the module being replaced: the
   * header, the thread entries up to the high-water mark and the string heap up to its top.
   */
  adoptState(previous: RuleModule): void {
    // the previous module stops evaluating here: its rule counts are read a last time
    previous.tally?.retire();
    const from = new Uint8Array(previous.memory.buffer);
    const hdr = new DataView(previous.memory.buffer, MEM.stateBase, 16);
    const threads = hdr.getUint32(4, true);
    const heapTop = hdr.getUint32(8, true);
    if (threads === 0 && hdr.getUint32(12, true) === 0) return;
    const to = new Uint8Array(this.memory.buffer);
    to.set(from.subarray(MEM.stateBase, STATE.threads + threads * THREAD.size), MEM.stateBase);
    if (heapTop > STATE.heap) to.set(from.subarray(STATE.heap, heapTop), STATE.heap);
  }

  /** Evaluates decoded events; `first` = Falco's rule_matching first. */
  evaluate(events: readonly SourceEvent[], first: boolean): BatchResult {
    const matches: Match[] = [];
    const referred: Referred[] = [];
    const handBack: number[] = [];
    let i = 0;
    while (i < events.length) {
      const source = events[i]!.source;
      let j = i;
      while (j < events.length && events[j]!.source === source) j++;
      let p = i;
      while (p < j) {
        // An event that does not fit after others starts the next chunk, alone if need be.
        const enc = this.encoders[source].encode(this.memory, events, p, Math.min(CHUNK, j - p));
        if (enc.count === 0) {
          // one event larger than the whole batch area on its own
          this.refer(events[p]!, p, 'too_large', first, matches, referred);
          p++;
          continue;
        }
        const r = this.run(SRC[source], 0, enc.count, first, p, matches, handBack);
        if (!r.ok) return r;
        for (const k of handBack) this.refer(events[k]!, k, 'scratch', first, matches, referred);
        handBack.length = 0;
        p += enc.count;
      }
      i = j;
    }
    // referred events' matches were appended after their chunk's: back to event order (stable: rule order kept)
    if (referred.length > 0) matches.sort((a, b) => a.event - b.event);
    return { ok: true, matches, referred };
  }

  /**
   * Evaluates n records already written at the batch region (byte sources), from record `from`
   * on (a range of the batch judged again after a failure); events indexed from 0 = record `from`.
   */
  evaluateRecords(source: 'syscall' | 'k8s_audit', n: number, first: boolean, from = 0): BatchResult {
    const matches: Match[] = [];
    const handBack: number[] = [];
    const r = this.run(SRC[source], from, n, first, 0, matches, handBack);
    return r.ok ? { ok: true, matches, handBack } : r;
  }

  /** The rules matching one event by the reference interpreter over this module's rules; undefined when stopped by the watchdog. */
  judgeByReference(ev: SourceEvent, first: boolean): LoadedRule[] | undefined {
    this.reference ??= new ReferenceJudge(this.rules, this.watchdogMs);
    return this.reference.judge(ev, first);
  }

  private refer(ev: SourceEvent, index: number, reason: Referred['reason'], first: boolean, matches: Match[], referred: Referred[]): void {
    const rules = this.judgeByReference(ev, first);
    referred.push({ source: ev.source, reason, stopped: rules === undefined });
    for (const rule of rules ?? []) matches.push({ event: index, rule });
  }

  /** Encodes events[start..] into the batch region (at most max); evaluateRecords() then judges them. */
  encode(source: 'syscall' | 'k8s_audit', events: readonly SourceEvent[], start: number, max: number): Encoded {
    return this.encoders[source].encode(this.memory, events, start, Math.min(max, CHUNK));
  }

  /** The record stride of a source in this module. */
  stride(source: 'syscall' | 'k8s_audit'): number {
    return this.compiled.generated.layouts[source].stride;
  }

  /**
   * Judges n records from record `from` of the batch region (calling evaluate until all are judged);
   * match indexes are `base` + the index from `from`; RAE_MATCH_REFERENCE records go to handBack.
   */
  private run(src: number, from: number, n: number, first: boolean, base: number, matches: Match[], handBack: number[]): BatchResult {
    const stride = src === SRC.syscall ? this.compiled.generated.layouts.syscall.stride : this.compiled.generated.layouts.k8s_audit.stride;
    const rules = this.compiled.generated.rules;
    let start = 0;
    while (start < n) {
      let k: number;
      const rec = MEM.batchBase + (from + start) * stride;
      // rule figures: one call in so many is timed whole (rule-tally.ts); the others cost nothing here
      const timed = this.tally?.beforeCall(first) ?? false;
      if (timed) this.watch.start();
      try {
        k = this.call(src, rec, n - start, first ? 1 : 0);
      } catch (err) {
        const e = err as Error & { code?: string };
        if (isWatchdogTimeout(e)) return { ok: false, error: runtimeError('ETIMEOUT', `evaluation stopped by the watchdog after ${this.watchdogMs} ms`) };
        if (e instanceof WebAssembly.RuntimeError) return { ok: false, error: runtimeError('ETRAP', `the rule module trapped: ${e.message}`) };
        return { ok: false, error: runtimeError('ETRAP', `evaluation failed: ${e.message}`) };
      }
      const seconds = timed ? this.watch.seconds() : 0;
      const out = new Uint32Array(this.memory.buffer, MEM.outBase, k * 2);
      for (let m = 0; m < k; m++) {
        const id = out[2 * m + 1]!;
        if (id === MATCH_REFERENCE) handBack.push(base + start + out[2 * m]!);
        else matches.push({ event: base + start + out[2 * m]!, rule: rules[id]! });
      }
      if (timed) this.tally!.afterSampledCall(src, rec, n - start, seconds);
      // A module only stops early after at least one event; anything else ends the batch, so a
      // misbehaving module cannot make the host loop.
      const resumed = this.resumeAt();
      start += resumed > 0 && resumed < n - start ? resumed : n - start;
    }
    return { ok: true, matches };
  }

  private call(src: number, rec: number, n: number, first: number): number {
    if (this.watchdogMs <= 0) return this.evaluateFn(src, rec, n, first, MEM.outBase, OUT_CAP);
    return guardedCall(this.evaluateFn, src, rec, n, first, MEM.outBase, OUT_CAP, this.watchdogMs);
  }
}
