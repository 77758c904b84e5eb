// Recorded events judged by each of the two engines, off the node: the reference interpreter
// (RuleMatcher) and the compiled WebAssembly evaluator (compiled in the compile worker, the way
// `rae run` compiles). Used by `rae replay` and the offline unit tests, which compare the two.
// Consumes a loaded ruleset and SourceEvents; produces, per event, the rules that matched it.
import type { LoadResult, LoadedRule, RuleMatching, SourceEvent } from '../engine/index.js';
import { RuleMatcher } from '../engine/index.js';
import type { Priority } from '../engine/priority.js';
import { RuleCompiler, RuleModule, selectRules } from '../runtime/index.js';

/** How rules are selected and matched, as the rules.* keys of `rae run` say. */
export interface MatchOptions {
  ruleMatching: RuleMatching;
  minPriority: Priority;
}

/** The rules the reference interpreter matches, one list per event (in rule order). */
export function interpreterMatches(ruleset: LoadResult['ruleset'], events: readonly SourceEvent[], options: MatchOptions): LoadedRule[][] {
  const matcher = new RuleMatcher(ruleset, options);
  return events.map((ev) => matcher.match(ev.source, ev.evtType, ev.fields));
}

/** Per-event matches, or why the engine could not judge the events. */
export type Judged = { ok: true; matches: LoadedRule[][]; referred: number } | { ok: false; message: string };

/**
 * The ruleset compiled (in the compile worker, stopped once it is done) into a module that judges
 * batches of events: per event the rules the compiled evaluator matches; `referred`: events it
 * handed to the reference interpreter (too large for the module's memory). A compile or module
 * failure is returned as a message, never thrown.
 */
export async function compiledJudge(ruleset: LoadResult['ruleset'], options: MatchOptions): Promise<{ ok: true; judge(events: readonly SourceEvent[]): Judged } | { ok: false; message: string }> {
  const compiler = new RuleCompiler();
  let compiled: Awaited<ReturnType<RuleCompiler['compile']>>;
  try {
    compiled = await compiler.compile(selectRules(ruleset.rules, options.minPriority));
  } finally {
    await compiler.close();
  }
  if (!compiled.ok) return { ok: false, message: compiled.errors.map((e) => `${e.code}: ${e.message}`).join('\n') };
  const created = RuleModule.create(compiled.compiled);
  if (!created.ok) return { ok: false, message: `${created.error.code}: ${created.error.message}` };
  const module = created.module;
  return {
    ok: true,
    judge(events) {
      const r = module.evaluate(events, options.ruleMatching === 'first');
      if (!r.ok) return { ok: false, message: `${r.error.code}: ${r.error.message}` };
      const matches = events.map((): LoadedRule[] => []);
      for (const m of r.matches) matches[m.event]!.push(m.rule);
      return { ok: true, matches, referred: r.referred?.length ?? 0 };
    },
  };
}
