// The detection engine's kernel path: judges a batch of kernel wire records (probes/src/events.h)
// as the capture addon delivers them. Process records update the thread table in the module's
// state region, syscall records become eval records without JS objects (the source's
// RecordTranslator); only matched events are decoded, for their alerts. Consumes the wire bytes
// and the ruleset slot's compiled module; produces alerts through the batch judge, or, when there
// is no module to judge with, a KernelUnready state the caller checks (never an exception).
// On the interpreter tier, the last compiled module judges the rules it shares with the running
// ruleset and the reference interpreter the added and changed ones (kernel-overlay.ts) until the
// tier-up. A failed batch is isolated like a decoded one, by ranges of its eval records (written
// once, judged again in place; the thread table was updated before the first call).
// A container's start judged while its container's metadata was missing (the translator's
// lateStarts) is held with its fields and the rules that fired for it (late-starts.ts) and judged
// once more by the reference interpreter when the metadata comes (judgeLate): alerts of the rules
// that did not fire the first time, with the event's own time and the container's fields.
import { FieldEvent, type LoadedRule, type SourceEvent } from '../engine/index.js';
import type { Alert } from '../output/alert.js';
import type { BatchJudge } from './batch-judge.js';
import { judged } from './batch-judge.js';
import type { DetectionEngineOptions, EngineStats, KernelUnready } from './engine-types.js';
import { runtimeError } from './errors.js';
import type { RuleModule } from './evaluator.js';
import type { Judgment } from './isolate.js';
import { KernelOverlay } from './kernel-overlay.js';
import { LateStarts } from './late-starts.js';
import type { Referred } from './reference.js';
import { type RulesetSlot, selectRules } from './ruleset-slot.js';

/** Judges kernel wire records for the slot's running ruleset. */
export class KernelPath {
  /** The byte path's view of the interpreter-tier ruleset over the last compiled module (built on the first kernel batch). */
  private overlay: KernelOverlay | undefined;
  /** Container starts judged before their container's metadata came. */
  private readonly late: LateStarts;

  constructor(
    private readonly options: DetectionEngineOptions,
    private readonly slot: RulesetSlot,
    private readonly judge: BatchJudge,
    private readonly stats: EngineStats,
  ) {
    this.late = new LateStarts(stats);
  }

  /** Why a kernel batch would be judged by nothing now, or undefined when the path is ready. */
  get unready(): KernelUnready | undefined {
    if (this.options.engine === 'interpreter') return 'interpreter-engine';
    if (!this.slot.module) return 'no-module';
    if (!this.options.kernel) return 'no-translator';
    return undefined;
  }

  /** Judges view[0..bytes); `bootToEpochNs` turns CLOCK_BOOTTIME record times into alert times. Returns the alert count, or why nothing was judged. */
  evaluate(view: Uint8Array, bytes: number, bootToEpochNs: bigint): number | KernelUnready {
    const module = this.slot.module;
    const kernel = this.options.kernel;
    if (this.options.engine === 'interpreter' || !module || !kernel) return this.unready!;
    // event i's record is at offsets[i] (the ingest's reused array: read only within this call)
    const n = kernel.ingestInto(module, view, bytes, bootToEpochNs);
    const offsets = kernel.offsets;
    const first = this.options.ruleMatching === 'first';
    // On the interpreter tier the module judges with rule matching `all`: its matches are merged with the interpreter's.
    const overlay = this.overlayOf(module);
    const moduleFirst = first && !overlay;
    const r0 = module.evaluateRecords('syscall', n, moduleFirst);
    const late = kernel.lateStarts?.(view, n);
    if (!overlay && r0.ok && r0.matches.length === 0 && !r0.handBack?.length && !late?.length) return this.judge.quiet(n);
    const base = this.judge.evaluated;
    const lazy: SourceEvent[] = [];
    const raw: Record<string, unknown>[] = [];
    const eventAt = (i: number): SourceEvent => {
      if (lazy[i]) return lazy[i];
      const fields = (raw[i] = kernel.fieldsOf(module, view, offsets[i]!, i));
      const timeNs = new DataView(view.buffer, view.byteOffset + offsets[i]!).getBigUint64(0, true) + bootToEpochNs;
      return (lazy[i] = { source: 'syscall', timeNs, evtType: fields['evt.type'] as string, fields: new FieldEvent(fields, { source: 'syscall', timeNs, num: BigInt(base + i + 1) }) });
    };
    // the rules that fire for each late start (they do not fire again when it is judged once more)
    const fired = new Map(late?.map((l) => [l.event, new Set<string>()]));
    const alertAt = (rule: LoadedRule, i: number): Alert => {
      fired.get(i)?.add(rule.name);
      return this.judge.alert(rule, eventAt(i));
    };
    // The whole batch was judged once already: its result is the first judgment.
    const judge = (start: number, count: number): Judgment<Alert> =>
      judged(() => {
        const r = start === 0 && count === n ? r0 : module.evaluateRecords('syscall', count, moduleFirst, start);
        if (!r.ok) return r;
        if (overlay) {
          const merged = overlay.merge(r.matches, r.handBack ?? [], start, count, (i) => eventAt(start + i), first, this.options.watchdogMs ?? 1000);
          if (!merged.ok) return merged;
          return { ok: true, out: merged.out.map((m) => alertAt(m.rule, start + m.event)) };
        }
        const matches = r.matches;
        if (r.handBack?.length) {
          // events whose transformer results did not fit the scratch area: the reference interpreter judges them
          const referred: Referred[] = [];
          for (const i of r.handBack) {
            const rules = module.judgeByReference(eventAt(start + i), first);
            referred.push({ source: 'syscall', reason: 'scratch', stopped: rules === undefined });
            for (const rule of rules ?? []) matches.push({ event: i, rule });
          }
          matches.sort((x, y) => x.event - y.event);
          this.judge.countReferred(referred);
        }
        return { ok: true, out: matches.map((m) => alertAt(m.rule, start + m.event)) };
      });
    const count = this.judge.batch(module, n, judge, () => 'syscall');
    for (const { event, key } of late ?? []) {
      const ev = eventAt(event);
      this.late.hold({ key, fields: raw[event]!, evtType: ev.evtType, timeNs: ev.timeNs, num: BigInt(base + event + 1), fired: fired.get(event)! });
    }
    return count;
  }

  /**
   * The metadata of container `key` came: its held starts are judged once more by the reference
   * interpreter with the container's fields as the rules read them now; the alerts of the rules
   * that did not fire the first time go out (with ruleMatching first, only for a start no rule
   * fired for). Returns the alert count.
   */
  judgeLate(key: string): number {
    const held = this.late.take(key);
    if (held.length === 0) return 0;
    const module = this.slot.module;
    const container = this.options.kernel?.containerFieldsOf?.(key);
    if (!module || !container) {
      this.stats.lateStartsDropped += held.length;
      return 0;
    }
    const first = this.options.ruleMatching === 'first';
    const alerts: Alert[] = [];
    for (const h of held) {
      if (first && h.fired.size > 0) continue;
      const fields = { ...h.fields, ...container };
      const ev: SourceEvent = { source: 'syscall', timeNs: h.timeNs, evtType: h.evtType, fields: new FieldEvent(fields, { source: 'syscall', timeNs: h.timeNs, num: h.num }) };
      try {
        // on the interpreter tier its matcher is the running ruleset; else the module's own rules
        const rules = this.slot.matcher ? this.slot.matcher.match('syscall', h.evtType, ev.fields) : module.judgeByReference(ev, first);
        if (rules === undefined) {
          this.stats.lateStartsDropped++;
          continue;
        }
        this.stats.lateStartsJudged++;
        for (const rule of rules) if (!h.fired.has(rule.name)) alerts.push(this.judge.alert(rule, ev));
      } catch (err) {
        this.stats.lateStartsDropped++;
        this.judge.report('late container start failed', runtimeError('ETRAP', `judging the start of container ${key} again failed: ${(err as Error)?.message ?? String(err)}`));
      }
    }
    for (const a of alerts) this.options.onAlert(a);
    return alerts.length;
  }

  /** The interpreter-tier ruleset as the byte path serves it over `module`, or undefined when `module` is the running ruleset's. */
  private overlayOf(module: RuleModule): KernelOverlay | undefined {
    const current = this.slot.current;
    if (!this.slot.matcher || !current || current === this.slot.moduleResult) {
      this.overlay = undefined;
      return undefined;
    }
    if (this.overlay?.module !== module || this.overlay.ruleset !== current) this.overlay = new KernelOverlay(module, current, selectRules(current.ruleset.rules, this.options.minPriority));
    return this.overlay;
  }
}
