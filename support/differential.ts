// Helpers of the differential tests: random field events drawn from the constants the rules
// themselves compare against (so rules actually match), consistent process ancestry (a chain of
// ancestors given as the proc.a* lists, as a live source would), and the oracle: the reference
// interpreter over every rule of the event's source and type, in rule order.
import fc from 'fast-check';
import type { LoadedRule } from '../host/engine/index.js';
import { Interpreter } from '../host/engine/interpreter.js';
import { typeClass } from '../host/engine/fields.js';
import { walkChecked, type Operand } from '../host/engine/ir.js';
import { RuleCompiler } from '../host/runtime/compiler.js';
import { RuleModule } from '../host/runtime/evaluator.js';
import { FieldEvent } from '../host/engine/field-event.js';
import type { SourceEvent } from '../host/engine/source-event.js';

type Kind = 'str' | 'int' | 'bool' | 'ip';
/** Field canonical -> kind and the constants rules compare it with. */
export type Pools = Map<string, { kind: Kind; values: string[] }>;

const PROC_CHAIN = new Set(['proc.name', 'proc.exe', 'proc.exepath', 'proc.cmdline', 'proc.pid']);
const ANCESTRY: Record<string, string> = {
  'proc.pname': 'proc.name',
  'proc.aname': 'proc.name',
  'proc.pexe': 'proc.exe',
  'proc.aexe': 'proc.exe',
  'proc.pexepath': 'proc.exepath',
  'proc.aexepath': 'proc.exepath',
  'proc.pcmdline': 'proc.cmdline',
  'proc.acmdline': 'proc.cmdline',
  'proc.ppid': 'proc.pid',
  'proc.apid': 'proc.pid',
};
const ENDPOINT: Record<string, string[]> = { 'fd.ip': ['fd.cip', 'fd.sip'], 'fd.net': ['fd.cip', 'fd.sip'], 'fd.snet': ['fd.sip'], 'fd.cnet': ['fd.cip'], 'fd.port': ['fd.cport', 'fd.sport'], 'fd.rnet': ['fd.rip'] };

function kindOf(type: Parameters<typeof typeClass>[0]): Kind {
  const c = typeClass(type);
  return c === 'signed' || c === 'unsigned' || c === 'double' ? 'int' : c === 'bool' ? 'bool' : c === 'ipaddr' || c === 'ipnet' ? 'ip' : 'str';
}

/** The constants of every field the rules read (ancestor and endpoint fields fold into their base). */
export function collectPools(rules: readonly LoadedRule[]): Pools {
  const pools: Pools = new Map();
  const add = (name: string, kind: Kind, vals: string[]) => {
    const p = pools.get(name) ?? { kind, values: [] };
    p.values.push(...vals);
    pools.set(name, p);
  };
  const visit = (o: Operand, vals: string[]) => {
    if (o.kind === 'transform') {
      for (const a of o.args) if (a.kind !== 'const') visit(a, vals);
      return;
    }
    const base = ANCESTRY[o.def.name];
    const ends = ENDPOINT[o.def.name];
    if (base) add(base, kindOf(o.type), vals);
    else if (ends) for (const e of ends) add(e, o.def.name.endsWith('port') ? 'int' : 'ip', vals);
    else if (o.def.name !== 'evt.type') add(o.canonical, kindOf(o.type), vals);
  };
  for (const r of rules) {
    walkChecked(r.condition, (n) => {
      if (n.kind === 'cmp')
        visit(
          n.left,
          n.values.map((v) => v.text),
        );
      else if (n.kind === 'exists') visit(n.operand, []);
      else if (n.kind === 'cmpfield') {
        visit(n.left, []);
        visit(n.right, []);
      }
    });
  }
  for (const p of pools.values()) p.values = [...new Set(p.values)].sort();
  return pools;
}

const ascii = fc.string({ unit: fc.constantFrom(...'abc/._-XYZ019 *?['.split('')), maxLength: 12 });

function strArb(values: string[], all: string[]): fc.Arbitrary<string> {
  const own = values.length > 0 ? fc.constantFrom(...values) : ascii;
  const other = all.length > 0 ? fc.constantFrom(...all) : ascii;
  const mutated = fc.tuple(own, fc.integer({ min: 0, max: 6 }), ascii).map(([v, how, r]) => {
    switch (how) {
      case 0:
        return v + r;
      case 1:
        return r + v;
      case 2:
        return v.toUpperCase();
      case 3:
        return v.slice(0, Math.max(0, v.length - 1));
      case 4:
        return `${r}/${v}/${r}`;
      case 5:
        return v.replace(/\*/g, 'x');
      default:
        return v.slice(1);
    }
  });
  // About 1 value in 100 is long: padded past 4096 bytes (where values used to be cut) up to 50 KiB.
  const long = fc.tuple(own, longPad, fc.integer({ min: 0, max: 2 })).map(([v, p, how]) => (how === 0 ? p + v : how === 1 ? v + p : p + v + p));
  return fc.oneof({ weight: 50, arbitrary: own }, { weight: 30, arbitrary: mutated }, { weight: 10, arbitrary: other }, { weight: 10, arbitrary: ascii }, { weight: 1, arbitrary: long });
}

/** Padding around the old 4096-byte cut and up to 50 KiB, of one- and two-byte characters. */
export const longPad = fc.tuple(fc.constantFrom(4090, 4096, 4097, 5000, 20_000, 50_000), fc.constantFrom('x', '/a', 'é', 'AbC')).map(([n, u]) => u.repeat(Math.ceil(n / u.length)).slice(0, n));

function intArb(values: string[]): fc.Arbitrary<number> {
  const nums = values.map(Number).filter((n) => Number.isFinite(n));
  const near = nums.length > 0 ? fc.tuple(fc.constantFrom(...nums), fc.integer({ min: -1, max: 1 })).map(([n, d]) => Math.max(0, n + d)) : fc.nat(10);
  return fc.oneof({ weight: 4, arbitrary: near }, { weight: 1, arbitrary: fc.nat(70000) });
}

function ipArb(values: string[]): fc.Arbitrary<string> {
  const v4 = values.map((v) => v.split('/')[0]!).filter((v) => /^\d+\.\d+\.\d+\.\d+$/.test(v));
  const near = v4.length > 0 ? fc.tuple(fc.constantFrom(...v4), fc.nat(255)).map(([v, b]) => v.replace(/\.\d+$/, `.${b}`)) : fc.constant('10.0.0.1');
  const rnd = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
  return fc.oneof({ weight: 2, arbitrary: v4.length > 0 ? fc.constantFrom(...v4) : rnd }, { weight: 2, arbitrary: near }, { weight: 1, arbitrary: rnd });
}

/** Random field events for rules of one source. */
export function eventArb(pools: Pools, source: 'syscall' | 'k8s_audit', types: string[], listFields: Set<string>): fc.Arbitrary<Record<string, unknown>> {
  const all = [...pools.values()].filter((p) => p.kind === 'str').flatMap((p) => p.values);
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, p] of pools) {
    if (PROC_CHAIN.has(name)) continue;
    let a: fc.Arbitrary<unknown> = p.kind === 'int' ? intArb(p.values) : p.kind === 'bool' ? fc.boolean() : p.kind === 'ip' ? ipArb(p.values) : strArb(p.values, all);
    if (listFields.has(name)) a = fc.array(a, { maxLength: 3 });
    fields[name] = fc.option(a, { freq: 4, nil: undefined });
  }
  const level = fc.record({
    name: fc.option(strArb(pools.get('proc.name')?.values ?? [], all), { freq: 8, nil: undefined }),
    exe: fc.option(strArb(pools.get('proc.exe')?.values ?? [], all), { freq: 3, nil: undefined }),
    exepath: fc.option(strArb(pools.get('proc.exepath')?.values ?? [], all), { freq: 3, nil: undefined }),
    cmdline: fc.option(strArb(pools.get('proc.cmdline')?.values ?? [], all), { freq: 3, nil: undefined }),
    pid: fc.option(fc.nat(5000), { freq: 3, nil: undefined }),
  });
  const type = types.length > 0 ? fc.constantFrom(...types) : fc.constant(undefined);
  return fc.tuple(fc.record(fields, { requiredKeys: [] }), fc.array(level, { minLength: 1, maxLength: 6 }), type).map(([f, chain, t]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(f)) if (v !== undefined) out[k] = v;
    if (source === 'syscall') {
      if (t !== undefined) out['evt.type'] = t;
      const put = (k: string, v: unknown) => v !== undefined && (out[k] = v);
      const [self, ...anc] = chain;
      put('proc.name', self!.name);
      put('proc.exe', self!.exe);
      put('proc.exepath', self!.exepath);
      put('proc.cmdline', self!.cmdline);
      put('proc.pid', self!.pid);
      // Ancestor lists are prefixes (a live source knows a contiguous chain).
      const prefix = <K extends keyof typeof self>(key: K) => {
        const vals: unknown[] = [];
        for (const a of anc) {
          if (a[key] === undefined) break;
          vals.push(a[key]);
        }
        return vals;
      };
      const lists: Array<[string, string, keyof NonNullable<typeof self>]> = [
        ['proc.aname', 'proc.pname', 'name'],
        ['proc.aexe', 'proc.pexe', 'exe'],
        ['proc.aexepath', 'proc.pexepath', 'exepath'],
        ['proc.acmdline', 'proc.pcmdline', 'cmdline'],
        ['proc.apid', 'proc.ppid', 'pid'],
      ];
      for (const [list, parent, key] of lists) {
        const vals = prefix(key);
        if (vals.length > 0) {
          out[list] = vals;
          out[parent] = vals[0];
        }
      }
    }
    return out;
  });
}

/** Field events to SourceEvents. */
export function toEvents(objs: Array<Record<string, unknown>>, source: 'syscall' | 'k8s_audit'): SourceEvent[] {
  return objs.map((fields, i) => {
    const evtType = typeof fields['evt.type'] === 'string' ? (fields['evt.type'] as string) : undefined;
    return { source, timeNs: 1_700_000_000_000_000_000n + BigInt(i), evtType, fields: new FieldEvent(fields, { source, timeNs: 1_700_000_000_000_000_000n + BigInt(i), num: BigInt(i + 1) }) };
  });
}

/** The oracle: every rule of the event's source (and type) that the interpreter matches, as "event:ruleIndex". */
export function oracle(rules: readonly LoadedRule[], events: readonly SourceEvent[]): string[] {
  const interp = new Interpreter();
  const out: string[] = [];
  events.forEach((ev, i) => {
    rules.forEach((r, id) => {
      if (r.source !== ev.source) return;
      if (r.source === 'syscall' && (ev.evtType === undefined || !r.evttypes?.has(ev.evtType))) return;
      if (interp.evaluate(r.condition, ev.fields)) out.push(`${i}:${id}`);
    });
  });
  return out;
}

/** Compiles rules (all of them, in the given order) to a live module. */
export async function compileAll(rules: readonly LoadedRule[]): Promise<RuleModule> {
  // no build deadline: on a busy machine a deadline races the load, and these builds are small
  const compiler = new RuleCompiler({ timeoutMs: 0 });
  try {
    const c = await compiler.compile(rules);
    if (!c.ok) throw new Error(c.errors.map((e) => `${e.code}: ${e.message}`).join('\n'));
    const m = RuleModule.create(c.compiled);
    if (!m.ok) throw new Error(m.error.message);
    return m.module;
  } finally {
    await compiler.close();
  }
}

/** The compiled module's matches in the oracle's notation. */
export function compiledMatches(m: RuleModule, events: readonly SourceEvent[]): string[] {
  const r = m.evaluate(events, false);
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  const ids = new Map(m.rules.map((rule, id) => [rule, id]));
  return r.matches.map((x) => `${x.event}:${ids.get(x.rule)}`);
}
