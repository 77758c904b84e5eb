// Checked rules to one AssemblyScript module (deterministic text): syscall rules grouped by
// evt.type id (a rule sits in the group of every type it can match, in definition order),
// k8s_audit rules in one group, one `evaluate(src, rec, n, first, out, cap)` export that walks a
// batch of eval records (probes/src/eval_abi.h) and writes (event, rule) matches. Consumes
// LoadedRules; produces the source text and the record layouts the host encoder must follow.
// Rule figures (docs/rule-cost.md): unless `counters: false`, the module keeps cumulative u64
// counters in its `counts()` area: the calls of each rule group (one increment per event that
// reaches a group, however many rules it has) and the matches of each (group, rule) pair (one
// increment per match). The host reads them only when figures are asked for (a scrape, a sampled
// batch), never per event or per batch; a group's calls minus the `first` matches before a rule
// give that rule's evaluations exactly. `profile(slot, skip, ...)` runs a group over listed
// records, whole, without one rule or one rule alone, for the sampled per-rule rates (what
// removing a rule saves, and the shared work it uses).
import { createHash } from 'node:crypto';
import type { LoadedRule } from '../ruleset.js';
import type { CheckedExpr } from '../ir.js';
import { walkChecked } from '../ir.js';
import type { Operand } from '../ir.js';
import type { Source } from '../fields.js';
import { CTR_KEYED, EVT_TYPES, evtTypeId, THREAD, type ContainerKey } from '../../abi/module.js';

/** Event types tested first when dispatching a record to its group (most frequent first). */
const HOT_TYPES = ['openat', 'open', 'openat2', 'execve', 'execveat', 'connect', 'accept4', 'accept', 'socket', 'sendto', 'recvfrom', 'close'];
import { resolveAccess, SlotTable, type SourceLayout } from './access.js';
import { LeafGen, ModuleParts } from './leaves.js';
import { CodegenLimit } from './strings.js';
import { Statics } from './values.js';

/** A rule the generator could not compile. */
export interface CodegenError {
  code: 'ECODEGEN';
  rule: string;
  message: string;
}

/** The generated module and what the host needs to drive it. */
export interface GeneratedModule {
  /** AssemblyScript source of the entry file (imports the runtime from "./index"). */
  code: string;
  /** Rule id (the value in match records) -> rule. */
  rules: readonly LoadedRule[];
  layouts: { syscall: SourceLayout; k8s_audit: SourceLayout };
  /** The most matches one event can produce (the largest group). */
  maxGroup: number;
  /** Which thread-entry fields the syscall rules read (for the host encoder). */
  threadUse: ThreadUse;
  /** Keyed container fields of conditions and outputs, in the order of the container entries' keyed refs (host/sources/container/table.ts). */
  containerKeys: ContainerKey[];
  /**
   * The counted groups: `slot` is the u64 of the group's calls in `counts()` (0: k8s_audit, else
   * the evt.type id), `rules` its rule ids in evaluation order, and the matches of `rules[p]` in
   * that group are the u64 at `hits + p`.
   */
  countSlots: ReadonlyArray<{ slot: number; rules: readonly number[]; hits: number }>;
  /** Number of u64 counters in `counts()`. */
  countWords: number;
  /** Whether the groups count their calls (GenerateOptions.counters). */
  counters: boolean;
  /** sha256 of the code. */
  hash: string;
}

/** How to generate a module. */
export interface GenerateOptions {
  /** Count each group's calls for the rule figures (default true; off only to measure what counting costs). */
  counters?: boolean;
}

/** Which thread-entry fields a module reads, and how deep. */
export interface ThreadUse {
  bases: string[];
  /** Deepest indexed ancestor level read. */
  levels: number;
  /** Whether some rule walks all ancestors (proc.aname without index). */
  walk: boolean;
  /** Whether some rule reads a container entry's field (container.*, k8s.* from the container table). */
  container?: boolean;
}

const PRELUDE = `import {
  ABI_VERSION, MISSING, ancestor, parentOf, has, eqBytes, cmpBytes, findBytes, ieqBytes, lower,
  globMatch, pmatch, dfaRegex, nfaRegex, foldCase, baseName, b64, concat2, listAlloc, listAppend, mapList, joinList, decimal, getoptList, listIn, pack, scratchReset,
  scratchFull, MATCH_REFERENCE,
} from "./index";

let epoch: u64 = 1;
let resume: i32 = 0;

@inline function thr(e: usize): usize { return usize(load<u32>(e + 4)); }
@inline function sref(e: usize, w: usize, bit: u64, off: usize): u64 { return (load<u64>(e + w) & bit) != 0 ? load<u64>(e + off) : MISSING; }
@inline function tref(t: usize, bit: u32, off: usize): u64 { return has(t, bit) ? load<u64>(t + off) : MISSING; }
@inline function ctr(e: usize): usize { const t = thr(e); return t == 0 ? 0 : usize(load<u32>(t + ${THREAD.ctr})); }
@inline function kref(c: usize, off: usize): u64 { return c == 0 ? MISSING : load<u64>(c + off); }
@inline function cmpSU(x: i64, y: u64): i32 { return x < 0 ? -1 : u64(x) < y ? -1 : u64(x) > y ? 1 : 0; }

/** The ABI version this module was generated for. */
export function abiVersion(): i32 { return ABI_VERSION; }
/** End of the module's statics. */
export function heapBase(): usize { return __heap_base; }
/** After evaluate() returned early (match buffer full), the index of the first event not evaluated. */
export function resumeAt(): i32 { return resume; }
`;

/** u64 counters before the (group, rule) match counters: one per group slot (0 the k8s_audit group, else the evt.type id). */
const COUNT_SLOTS = EVT_TYPES.length + 1;

/** Transformers whose results are new strings in the scratch area (assembly/transform.ts). */
const SCRATCH_TRANSFORMS = new Set(['tolower', 'toupper', 'b64', 'concat', 'join', 'getopt', 'list', 'basename', 'len']);

function operandsOf(e: CheckedExpr): Operand[] {
  const out: Operand[] = [];
  const add = (o: Operand) => {
    out.push(o);
    if (o.kind === 'transform') for (const a of o.args) if (a.kind !== 'const') add(a);
  };
  walkChecked(e, (n) => {
    if (n.kind === 'exists') add(n.operand);
    else if (n.kind === 'cmp') add(n.left);
    else if (n.kind === 'cmpfield') {
      add(n.left);
      add(n.right);
    }
  });
  return out;
}

/** Whether a condition compares two fields case-insensitively (both folded into scratch) or runs a regex (invalid UTF-8 replaced in scratch). */
function usesFolding(e: CheckedExpr): boolean {
  let found = false;
  walkChecked(e, (n) => {
    if (n.kind === 'cmpfield' && (n.op === 'icontains' || n.op === 'iglob')) found = true;
    if (n.kind === 'cmp' && n.op === 'regex') found = true;
  });
  return found;
}

/**
 * Cost sampling: `profile(slot, skip, first, ...)` runs the rules of group `slot` in order, as
 * the group does (under `first` a match ends it), leaving out the rule at position `skip` (-1:
 * none), over the m records at rec whose indexes are the u32s at idx; slot -1 runs the loop
 * alone (the baseline). The group's time minus its time without a rule is what removing that
 * rule saves, operands shared with the group's other rules (memoised per event) included: a rule
 * timed alone would pay for those, which the others compute anyway. `skip` below -1 runs only
 * the rule at position -2 - skip: its time alone less what removing it saves is the shared work
 * it uses, by which the tally splits a group's shared work. Never on the hot path; loops of
 * their own per group, so no dispatch inside the timed loop.
 */
function profileExport(groups: ReadonlyArray<{ slot: number; rules: readonly number[] }>): string[] {
  const profileLoop = (name: string, test: string) => [
    `function ${name}(rec: usize, stride: usize, idx: usize, m: i32, skip: i32, f: bool): i32 {`,
    '  let c = 0;',
    '  for (let j = 0; j < m; j++) {',
    '    const e = rec + <usize>load<u32>(idx + (<usize>j << 2)) * stride;',
    '    epoch++;',
    '    scratchReset();',
    `    c += ${test};`,
    '  }',
    '  return c;',
    '}',
  ];
  const groupFn = (g: { slot: number; rules: readonly number[] }) => [
    `function Q${g.slot}(e: usize, skip: i32, f: bool): i32 {`,
    '  let k = 0;',
    ...g.rules.map((id, p) => `  if (skip != ${p} && R${id}(e)) { k++; if (f) return k; }`),
    '  return k;',
    '}',
    // one rule alone (skip = -2 - its position)
    `function O${g.slot}(e: usize, skip: i32, f: bool): i32 {`,
    '  switch (skip) {',
    ...g.rules.map((id, p) => `    case ${-2 - p}: return R${id}(e) ? 1 : 0;`),
    '    default: return 0;',
    '  }',
    '}',
  ];
  return [
    ...profileLoop('S_', '(e == 0 ? 1 : 0)'),
    ...groups.flatMap((g) => [...groupFn(g), ...profileLoop(`S${g.slot}`, `Q${g.slot}(e, skip, f)`), ...profileLoop(`O${g.slot}_`, `O${g.slot}(e, skip, f)`)]),
    '/** Cost sampling: the rules of group slot but the one at position skip (below -1: only the one at -2 - skip; slot -1: the loop alone) over the m records at rec listed (u32 indexes) at idx; returns their matches. */',
    'export function profile(slot: i32, skip: i32, first: i32, rec: usize, stride: usize, idx: usize, m: i32): i32 {',
    '  const f = first != 0;',
    '  switch (slot) {',
    ...groups.map((g) => `    case ${g.slot}: return skip < -1 ? O${g.slot}_(rec, stride, idx, m, skip, f) : S${g.slot}(rec, stride, idx, m, skip, f);`),
    '    default: return S_(rec, stride, idx, m, skip, f);',
    '  }',
    '}',
  ];
}

/** The rule figures' counters: `words` cumulative u64s (group calls by slot, then (group, rule) matches), `bump(c)` adds one to counter c. */
function countArea(words: number): string[] {
  return [
    '/** Rule figures: cumulative u64 counters (group calls by slot, then (group, rule) matches); the host reads them, never writes them. */',
    `const COUNTS = memory.data(${words * 8});`,
    'export function counts(): usize { return COUNTS; }',
    '@inline function bump(c: usize): void { const p = COUNTS + (c << 3); store<u64>(p, load<u64>(p) + 1); }',
  ];
}

/** Generates the module for rules given in evaluation order (ids are positions). */
export function generateModule(rules: readonly LoadedRule[], options: GenerateOptions = {}): { module?: GeneratedModule; errors: CodegenError[] } {
  const counters = options.counters ?? true;
  const tables = { syscall: new SlotTable('syscall'), k8s_audit: new SlotTable('k8s_audit') };
  const threadUse: ThreadUse = { bases: [], levels: 0, walk: false };
  for (const r of rules) {
    for (const o of operandsOf(r.condition)) {
      if (o.kind !== 'field') continue;
      const acc = resolveAccess(o, r.source, tables[r.source]);
      if (acc.k === 'thread' && acc.field.ctr) threadUse.container = true;
      else if (acc.k === 'thread' || acc.k === 'walk') {
        if (!threadUse.bases.includes(acc.field.base)) threadUse.bases.push(acc.field.base);
        if (acc.k === 'walk') threadUse.walk = true;
        else threadUse.levels = Math.max(threadUse.levels, acc.level);
      }
    }
  }
  threadUse.bases.sort();
  // keyed container fields of outputs get entry values too (alerts render them from the table)
  for (const r of rules) {
    if (r.source !== 'syscall') continue;
    for (const t of r.output) if (t.kind === 'field' && t.arg !== undefined && CTR_KEYED.has(t.name)) tables.syscall.containerKey({ canonical: t.canonical, name: t.name, arg: t.arg });
  }
  const layouts = { syscall: tables.syscall.layout(), k8s_audit: tables.k8s_audit.layout() };
  const statics = new Statics();
  const parts = new ModuleParts();
  const gens = { syscall: new LeafGen('syscall', tables.syscall, statics, parts), k8s_audit: new LeafGen('k8s_audit', tables.k8s_audit, statics, parts) };
  const errors: CodegenError[] = [];
  const ruleFns: string[] = [];
  const hoisted = new Hoisted();
  const live: boolean[] = [];
  rules.forEach((r, id) => {
    let body: string;
    const gen = gens[r.source];
    gen.callTypes = r.source === 'syscall' && r.evttypes ? new Set([...r.evttypes].map(evtTypeId).filter((t) => t !== 0)) : undefined;
    try {
      body = expr(r.condition, gen, hoisted);
    } catch (err) {
      if (!(err instanceof CodegenLimit)) throw err;
      errors.push({ code: 'ECODEGEN', rule: r.name, message: `rule '${r.name}': ${err.message}` });
      live.push(false);
      return;
    }
    live.push(body !== 'false');
    ruleFns.push(`// rule ${id}`, `function R${id}(e: usize): bool {`, `  return ${body};`, `}`);
  });
  const groups = new Map<number, number[]>();
  const audit: number[] = [];
  rules.forEach((r, id) => {
    if (!live[id]) return;
    if (r.source === 'k8s_audit') audit.push(id);
    else
      for (const t of [...(r.evttypes ?? [])].sort()) {
        const tid = evtTypeId(t);
        if (tid === 0) continue;
        groups.set(tid, [...(groups.get(tid) ?? []), id]);
      }
  });
  const groupFns: string[] = [];
  const countSlots: Array<{ slot: number; rules: readonly number[]; hits: number }> = [];
  let countWords = COUNT_SLOTS;
  const groupFn = (name: string, ids: number[], slot: number) => {
    groupFns.push(`function ${name}(e: usize, i: i32, out: usize, k: i32, first: bool): i32 {`);
    const hits = countWords;
    if (ids.length > 0) {
      countSlots.push({ slot, rules: ids, hits });
      countWords += ids.length;
    }
    if (counters && ids.length > 0) groupFns.push(`  bump(${slot});`);
    ids.forEach((id, p) => {
      const hit = counters ? ` bump(${hits + p});` : '';
      groupFns.push(`  if (R${id}(e)) { store<u64>(out + (<usize>k << 3), u64(u32(i)) | (u64(${id}) << 32)); k++;${hit} if (first) return k; }`);
    });
    groupFns.push('  return k;', '}');
  };
  const tids = [...groups.keys()].sort((a, b) => a - b);
  for (const t of tids)
    groupFn(
      `G${t}`,
      groups.get(t)!.sort((a, b) => a - b),
      t,
    );
  // AssemblyScript compiles a switch to a chain of compares: the event types that dominate
  // every real workload come first, the rest in id order (deterministic either way).
  const hot = (t: number) => {
    const i = HOT_TYPES.indexOf(EVT_TYPES[t - 1]!);
    return i < 0 ? HOT_TYPES.length : i;
  };
  const dispatchOrder = [...tids].sort((a, b) => hot(a) - hot(b) || a - b);
  groupFn('A', audit, 0);
  const maxGroup = Math.max(1, audit.length, ...[...groups.values()].map((g) => g.length));
  // A source whose rules write transformer results: an event whose results did not all fit the
  // scratch area gets no verdict of its own; its matches are replaced by one RAE_MATCH_REFERENCE
  // record, and the host judges it with the reference interpreter.
  const usesScratch = (source: LoadedRule['source']) => rules.some((r, id) => live[id] && r.source === source && (usesFolding(r.condition) || operandsOf(r.condition).some((o) => o.kind === 'transform' && SCRATCH_TRANSFORMS.has(o.name))));
  const loop = (stride: number, dispatch: string[], scratch: boolean) => [
    '    for (let i = 0; i < n; i++) {',
    `      if (k + ${maxGroup} > cap) { resume = i; return k; }`,
    `      const e = rec + <usize>i * ${stride};`,
    '      epoch++;',
    '      scratchReset();',
    ...(scratch ? ['      const k0 = k;'] : []),
    ...dispatch.map((d) => `      ${d}`),
    ...(scratch ? ['      if (scratchFull()) { store<u64>(out + (<usize>k0 << 3), u64(u32(i)) | (u64(MATCH_REFERENCE) << 32)); k = k0 + 1; }'] : []),
    '    }',
    '    return k;',
  ];
  const evaluate = [
    '/** Evaluates n records of source src at rec; writes (event, rule) matches at out (cap entries). */',
    'export function evaluate(src: i32, rec: usize, n: i32, first: i32, out: usize, cap: i32): i32 {',
    '  let k = 0;',
    '  resume = n;',
    '  const f = first != 0;',
    '  if (src == 0) {',
    ...loop(layouts.syscall.stride, ['switch (load<u32>(e)) {', ...dispatchOrder.map((t) => `  case ${t}: k = G${t}(e, i, out, k, f); break;`), '  default: break;', '}'], usesScratch('syscall')),
    '  }',
    '  if (src == 1) {',
    ...loop(layouts.k8s_audit.stride, ['k = A(e, i, out, k, f);'], usesScratch('k8s_audit')),
    '  }',
    '  return k;',
    '}',
  ];
  // without counters there is no tally to read profiles: only the baseline loop, so the export stays (validate.ts)
  const profile = profileExport(counters ? countSlots : []);
  const code = [
    '// Generated by host/engine/codegen from the rules listed below; do not edit.',
    PRELUDE,
    ...countArea(countWords),
    ...statics.decls,
    ...parts.operands.flatMap((o) => {
      const out: string[] = [];
      o.emit(out);
      return out;
    }),
    ...parts.decls,
    ...hoisted.fns,
    ...ruleFns,
    ...groupFns,
    ...evaluate,
    ...profile,
    '',
  ].join('\n');
  if (errors.length > 0) return { errors };
  const hash = createHash('sha256').update(code).digest('hex');
  return { module: { code, rules, layouts, maxGroup, threadUse, containerKeys: tables.syscall.containerKeys, countSlots, countWords, counters, hash }, errors };
}

/**
 * Why the compiled evaluator cannot run a leaf of a checked condition (the CodegenLimit's
 * message), or undefined. The load checks every leaf with it (engine facade), so a rule it
 * refuses is a located load diagnostic for both engines and generateModule never meets one.
 */
export function leafLimit(leaf: CheckedExpr, source: Source): string | undefined {
  const gen = new LeafGen(source, new SlotTable(source), new Statics(), new ModuleParts());
  try {
    expr(leaf, gen, new Hoisted());
    return undefined;
  } catch (err) {
    if (err instanceof CodegenLimit) return err.message;
    throw err;
  }
}

/**
 * A generated boolean expression longer than MAX_EXPR characters is split into functions of at
 * most about CHUNK characters: AssemblyScript compiles `a || b || ...` recursively (3,000 terms
 * overflowed its stack), and V8's first compile of a function grows faster than linearly with
 * its inlined leaves (2,000 startswith terms: 18 s in chunks of 2,048 characters, 0.14 s in
 * chunks of 256). Below MAX_EXPR nothing is split (3 of the corpus' expressions are longer).
 */
const MAX_EXPR = 1024;
const CHUNK = 256;

/** Parts of rule conditions moved into functions of their own (`Pn(e)`), shared by identical bodies. */
class Hoisted {
  readonly fns: string[] = [];
  private readonly byBody = new Map<string, string>();

  /** A call of a function returning `body`. */
  call(body: string): string {
    let name = this.byBody.get(body);
    if (!name) {
      name = `P${this.byBody.size}(e)`;
      this.byBody.set(body, name);
      this.fns.push(`function ${name.slice(0, -3)}(e: usize): bool {`, `  return ${body};`, `}`);
    }
    return name;
  }
}

/** `terms` joined by `op`, as calls of chunks when the text would exceed MAX_EXPR (so linear in the term count). */
function joinBounded(terms: string[], op: ' && ' | ' || ', h: Hoisted): string {
  let ts = terms;
  for (;;) {
    const text = ts.length === 1 ? ts[0]! : `(${ts.join(op)})`;
    if (text.length <= MAX_EXPR) return text;
    const groups: string[][] = [];
    let len = CHUNK;
    for (const t of ts) {
      if (len + t.length > CHUNK) {
        groups.push([]);
        len = 0;
      }
      groups[groups.length - 1]!.push(t);
      len += t.length + op.length;
    }
    ts = groups.map((g) => (g.length === 1 && /^[A-Z]\w*\(e\)$/.test(g[0]!) ? g[0]! : h.call(g.length === 1 ? g[0]! : `(${g.join(op)})`)));
  }
}

function expr(e: CheckedExpr, g: LeafGen, h: Hoisted): string {
  switch (e.kind) {
    case 'and':
    case 'or': {
      const children = e.kind === 'or' ? mergeSets(e.children, g) : e.children;
      const parts = children.map((c) => expr(c, g, h));
      const absorb = e.kind === 'and' ? 'false' : 'true';
      const unit = e.kind === 'and' ? 'true' : 'false';
      if (parts.includes(absorb)) return absorb;
      const rest = parts.filter((p) => p !== unit);
      if (rest.length === 0) return unit;
      const terms = e.kind === 'or' ? factorHeads(rest, h) : rest;
      return joinBounded(terms, e.kind === 'and' ? ' && ' : ' || ', h);
    }
    case 'not': {
      const inner = expr(e.child, g, h);
      return inner === 'true' ? 'false' : inner === 'false' ? 'true' : `!${inner.startsWith('(') || /^[LP]\d+\(e\)$/.test(inner) ? inner : `(${inner})`}`;
    }
    case 'exists':
      return g.exists(e);
    case 'cmp':
      return g.cmp(e, `${e.left.kind === 'field' ? e.left.canonical : e.left.name + '()'} ${e.op} ${e.values.map((v) => v.text).join(', ')}`);
    case 'cmpfield':
      return g.cmpField(e, `${e.op} between fields`);
  }
}

type Cmp = Extract<CheckedExpr, { kind: 'cmp' }>;

/**
 * The disjuncts of an `or` with the `=`/`in` tests of one string operand merged into one `in`
 * (at the first one's place): `proc.name=a or fd.name=/x or proc.name=b` tests proc.name's set
 * {a, b} once, one class bit, however many terms a generated rule has. Leaves are pure, so the
 * order of disjuncts does not change the result.
 */
function mergeSets(children: readonly CheckedExpr[], g: LeafGen): CheckedExpr[] {
  const groups = new Map<string, Cmp[]>();
  const keyed = children.map((c) => {
    const key = g.setKey(c);
    if (key !== undefined) groups.set(key, [...(groups.get(key) ?? []), c as Cmp]);
    return key;
  });
  if ([...groups.values()].every((m) => m.length === 1)) return [...children];
  const out: CheckedExpr[] = [];
  children.forEach((c, i) => {
    const members = keyed[i] === undefined ? undefined : groups.get(keyed[i]!)!;
    if (!members || members.length === 1) out.push(c);
    else if (members[0] === c) out.push({ ...members[0], op: 'in', list: true, values: members.flatMap((m) => m.values) });
  });
  return out;
}

/**
 * Adjacent disjuncts that are conjunctions with the same first leaf, `(L && a) || (L && b)`,
 * become `(L && (a || b))`: the leaf is tested once (macros expanded into exception lists
 * repeat it). A conjunction's text is always `(first && rest)` (rest perhaps a call of the
 * split-out remainder), so the split is exact; the regrouped disjunction is bounded as well.
 */
function factorHeads(parts: string[], h: Hoisted): string[] {
  const out: Array<{ head?: string; rests: string[]; text: string }> = [];
  for (const p of parts) {
    const m = /^\((L\d+\(e\)) && (.+)\)$/.exec(p);
    const last = out[out.length - 1];
    const rest = m && (/^[LP]\d+\(e\)$/.test(m[2]!) ? m[2]! : `(${m[2]})`);
    if (m && rest && last?.head === m[1]) last.rests.push(rest);
    else out.push(m && rest ? { head: m[1]!, rests: [rest], text: p } : { rests: [], text: p });
  }
  return out.map((o) => (o.head && o.rests.length > 1 ? joinBounded([o.head, joinBounded(o.rests, ' || ', h)], ' && ', h) : o.text));
}
