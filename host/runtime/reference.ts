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
import { type LoadedRule, RuleMatcher, type SourceEvent } from '../engine/index.js';
import type { ReferenceReason } from '../metrics/names.js';
import { guardedCall } from './watchdog.js';

/** One event judged by the reference interpreter for a module. */
export interface Referred {
  source: SourceEvent['source'];
  reason: ReferenceReason;
  /** The watchdog stopped the judgment (or the interpreter failed): no verdict (count it as dropped). */
  stopped: boolean;
}

/** Judges single events with the reference interpreter (RuleMatcher) over a compiled module's rules. */
export class ReferenceJudge {
  private readonly matcher: RuleMatcher;

  constructor(
    /** The module's rules (selected already: enabled, at or above the minimum priority, in order). */
    rules: readonly LoadedRule[],
    private readonly watchdogMs: number,
  ) {
    this.matcher = new RuleMatcher({ rules: [...rules] }, { ruleMatching: 'all', minPriority: 'Debug' });
  }

  /** The rules matching ev, in rule order (`first`: at most one); undefined when stopped or failed. */
  judge(ev: SourceEvent, first: boolean): LoadedRule[] | undefined {
    let out: LoadedRule[] = [];
    const run = (): number => {
      out = this.matcher.match(ev.source, ev.evtType, ev.fields, first);
      return 0;
    };
    try {
      if (this.watchdogMs > 0) guardedCall(run, 0, 0, 0, 0, 0, 0, this.watchdogMs);
      else run();
    } catch {
      return undefined;
    }
    return out;
  }
}
