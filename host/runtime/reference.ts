// Reference judging inside the compiled tier. Rules compare whole values (no cut, as Falco), so
// a few events cannot be judged whole inside a module's fixed memory: one larger than the batch
// area on its own, or one whose transformer results (tolower, b64, concat...) do not fit the
// scratch area (the module hands it back with RAE_MATCH_REFERENCE, probes/src/eval_abi.h).
// Those are judged here by the reference interpreter over the module's own rules, with the
// module's grouping (syscall rules of the event's evt.type, k8s_audit rules all) and order, so
// the verdict is the one the module would give with unbounded memory; the caller counts them
// (enginesecurity_engine_events_reference_judged_total). Each event runs under the module's
// watchdog deadline (the interpreter's regexes are JavaScript's): an event stopped there (or
// failing in the interpreter) has no verdict and is reported as such, never as "no match".
import type { LoadedRule } from '../engine/index.js';
import { Interpreter } from '../engine/interpreter.js';
import type { ReferenceReason } from '../metrics/names.js';
import type { SourceEvent } from '../sources/types.js';
import { guardedCall } from './watchdog.js';

/** One event judged by the reference interpreter for a module. */
export interface Referred {
  source: SourceEvent['source'];
  reason: ReferenceReason;
  /** The watchdog stopped the judgment (or the interpreter failed): no verdict (count it as dropped). */
  stopped: boolean;
}

/** Judges single events with the reference interpreter over a compiled module's rules. */
export class ReferenceJudge {
  private readonly interpreter = new Interpreter();

  constructor(
    /** The module's rules; a rule's id is its position. */
    private readonly rules: readonly LoadedRule[],
    private readonly watchdogMs: number,
  ) {}

  /** The ids of the rules matching ev, in rule order (`first`: at most one); undefined when stopped or failed. */
  judge(ev: SourceEvent, first: boolean): number[] | undefined {
    const ids: number[] = [];
    const run = (): number => {
      for (let id = 0; id < this.rules.length; id++) {
        const r = this.rules[id]!;
        if (r.source !== ev.source) continue;
        if (r.source === 'syscall' && (ev.evtType === undefined || !r.evttypes?.has(ev.evtType))) continue;
        if (!this.interpreter.evaluate(r.condition, ev.fields)) continue;
        ids.push(id);
        if (first) break;
      }
      return 0;
    };
    try {
      if (this.watchdogMs > 0) guardedCall(run, 0, 0, 0, 0, 0, 0, this.watchdogMs);
      else run();
    } catch {
      return undefined;
    }
    return ids;
  }
}
