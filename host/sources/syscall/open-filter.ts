// Which read-only opens the loaded rules can ever match, decided from their checked conditions, so
// that the probe leaves the others in the kernel (issue 33: a record no rule can match costs the
// probe its ring output and the engine its copy, translation and evaluation, and alerts nothing).
//
// The records this is about: a successful open, openat or openat2 whose access mode is O_RDONLY,
// of an absolute path that normalization leaves as it is (no '//', no '.' or '..' component, no
// trailing '/'). For such a record fd.name and fd.nameraw are the path as passed, evt.type is
// known, evt.is_open_read is true, evt.is_open_write and evt.failed false. Each rule's condition is
// judged over that record with every other field unknown: never true, always true, unknown, or
// true only if fd.name equals one of some paths or starts with one of some prefixes, or proc.name
// is one of some names (a rule that reads opens of any path by a named process: tar, sshd). When
// every rule gives never-true or such a constraint, the probe records these opens only when their
// path is one of the union of those paths and prefixes (an LPM trie in the kernel) or the process's
// name one of the union of those names (a hash of names, against the name the engine's thread
// table holds: probe.bpf.c keeps it per process); when any rule gives unknown or always-true (a
// rule that reads read opens of any path by any process), or a rule reads evt.num (a filtered
// record would shift every later event's number), there is no filter and every open is recorded
// as before. Over-approximating is safe: a kept record is judged as before.
import type { LoadedRule } from '../../engine/index.js';
import { OPEN_KEY_BYTES } from '../../abi/records.js';
import { forEachField } from './fields.js';

type CheckedExpr = LoadedRule['condition'];

/**
 * What a read-only open must have for some rule to match it: its path one of `exact` or under one
 * of `prefixes`, or its process's name (proc.name) one of `names`.
 */
export interface OpenPaths {
  exact: string[];
  prefixes: string[];
  names: string[];
}

/** A condition's value over the open described above ('paths': true only if the path or the process's name is one of these). */
type Verdict = { t: 'true' } | { t: 'false' } | { t: 'any' } | { t: 'paths'; exact: Set<string>; prefixes: Set<string>; names: Set<string> };

const TRUE: Verdict = { t: 'true' };
const FALSE: Verdict = { t: 'false' };
const ANY: Verdict = { t: 'any' };

/** The syscalls whose read-only opens the probe can filter by path. */
export const PATH_FILTERED = ['open', 'openat', 'openat2'] as const;

/** The longest path the probe's trie takes: the bound rae_capture_set_open_paths and unwanted_open put on a path (RAE_OPEN_KEY_BYTES - 2). */
const MAX_FILTER_PATH = OPEN_KEY_BYTES - 2;

const paths = (exact: Iterable<string>, prefixes: Iterable<string>, names: Iterable<string> = []): Verdict => ({ t: 'paths', exact: new Set(exact), prefixes: new Set(prefixes), names: new Set(names) });

/**
 * `evt.num = 0`, which no event satisfies (the translators number a source's events from 1), with
 * or without this filter: the rules' macros use it as their never-true placeholder.
 */
const NEVER_NUM = (e: Extract<CheckedExpr, { kind: 'cmp' }>): boolean => e.left.kind === 'field' && e.left.def.name === 'evt.num' && e.op === '=' && !e.modifier && e.values.length === 1 && e.values[0]!.num === 0n;

/** A bool-field comparison's value for the open: `known` is the field's value. */
function boolCmp(op: string, text: string, known: boolean): Verdict {
  const v = text.toLowerCase();
  if ((op !== '=' && op !== '!=') || (v !== 'true' && v !== 'false')) return ANY;
  return ((v === 'true') === known) === (op === '=') ? TRUE : FALSE;
}

/** Text no path the probe filters contains (plain_path in probe.bpf.c). */
const UNPLAIN = /\/\/|\/\.|\.\./;

/** The literal part of a glob before its first wildcard (the prefix every match starts with). */
function globPrefix(pattern: string): string {
  const i = pattern.search(/[*?[\\]/);
  return i < 0 ? pattern : pattern.slice(0, i);
}

/** A leaf comparison's value for a read-only open of syscall `evtType`. */
function leaf(e: Extract<CheckedExpr, { kind: 'cmp' }>, evtType: string): Verdict {
  if (e.left.kind !== 'field' || e.modifier || e.left.arg !== undefined) return ANY;
  const texts = e.values.map((v) => v.text);
  const name = e.left.def.name;
  switch (name) {
    case 'evt.type':
      if (e.op === '=' || e.op === 'in') return texts.includes(evtType) ? TRUE : FALSE;
      if (e.op === '!=') return texts.includes(evtType) ? FALSE : TRUE;
      return ANY;
    case 'evt.num':
      return NEVER_NUM(e) ? FALSE : ANY;
    case 'evt.is_open_read':
      return boolCmp(e.op, texts[0] ?? '', true);
    case 'evt.is_open_write':
    case 'evt.failed':
      return boolCmp(e.op, texts[0] ?? '', false);
    case 'fd.name':
    case 'fd.nameraw':
      if (e.op === '=' || e.op === 'in') return paths(texts, []);
      if (e.op === 'startswith') return paths([], texts);
      if (e.op === 'pmatch') return paths([], texts.map(globPrefix)); // an entry's literal start, should it hold a wildcard
      // a glob whose literal text holds '//', '/.' or '..' matches no plain path; a bracket or an
      // escape makes its text no longer literal ('/a[/.]b' matches '/a/b'), so those bound by prefix only
      if (e.op === 'glob') return texts.every((t) => !/[[\\]/.test(t) && UNPLAIN.test(t.split(/[*?]/).join('\0'))) ? FALSE : paths([], texts.map(globPrefix));
      if (e.op === 'contains' || e.op === 'endswith') return texts.every((t) => UNPLAIN.test(t)) ? FALSE : ANY;
      return ANY;
    case 'proc.name':
      // the engine's proc.name of the open's process: the probe keeps every open of a process whose
      // name (as the thread table holds it) is in the set, whatever its path
      if (e.op === '=' || e.op === 'in') return paths([], [], texts);
      return ANY;
    case 'fd.directory':
      if (e.op === '=' || e.op === 'in')
        return paths(
          [],
          texts.map((d) => (d.endsWith('/') ? d : `${d}/`)),
        );
      return ANY;
    default:
      return ANY;
  }
}

function and(vs: Verdict[]): Verdict {
  if (vs.some((v) => v.t === 'false')) return FALSE;
  const constrained = vs.filter((v): v is Extract<Verdict, { t: 'paths' }> => v.t === 'paths');
  // any one conjunct's constraint bounds the whole; one without names first (a name keeps every
  // open of its processes, a path only the opens of it), then the one with the fewest entries
  const weight = (v: Extract<Verdict, { t: 'paths' }>) => (v.names.size > 0 ? 1e9 : 0) + v.exact.size + v.prefixes.size + v.names.size;
  if (constrained.length > 0) return constrained.reduce((a, b) => (weight(b) < weight(a) ? b : a));
  return vs.every((v) => v.t === 'true') ? TRUE : ANY;
}

function or(vs: Verdict[]): Verdict {
  if (vs.some((v) => v.t === 'true')) return TRUE;
  if (vs.some((v) => v.t === 'any')) return ANY;
  const constrained = vs.filter((v): v is Extract<Verdict, { t: 'paths' }> => v.t === 'paths');
  if (constrained.length === 0) return FALSE;
  return paths(
    constrained.flatMap((v) => [...v.exact]),
    constrained.flatMap((v) => [...v.prefixes]),
    constrained.flatMap((v) => [...v.names]),
  );
}

function judge(e: CheckedExpr, evtType: string): Verdict {
  switch (e.kind) {
    case 'and':
      return and(e.children.map((c) => judge(c, evtType)));
    case 'or':
      return or(e.children.map((c) => judge(c, evtType)));
    case 'not': {
      const v = judge(e.child, evtType);
      return v.t === 'true' ? FALSE : v.t === 'false' ? TRUE : ANY;
    }
    case 'cmp':
      return leaf(e, evtType);
    default:
      return ANY;
  }
}

/** Whether rule `r` reads evt.num (in its output, or in its condition other than `evt.num = 0`): numbers shift when records are filtered. */
function readsEvtNum(r: LoadedRule): boolean {
  let reads = false;
  forEachField(r, (name, _arg, _canonical, _where, node) => {
    reads ||= name === 'evt.num' && !(node?.kind === 'cmp' && NEVER_NUM(node));
  });
  return reads;
}

/**
 * The paths and process names of read-only opens some enabled syscall rule of `rules` can match,
 * or undefined when the probe must record every open (a rule that can match a read-only open of
 * any path by any process, or one that reads evt.num). Paths longer than the probe's trie holds,
 * or an empty prefix, mean no filter. A name longer than a comm's 15 bytes (the thread table's
 * proc.name is the comm) is kept whole here; the probe compares its first 15 bytes.
 */
export function openPathFilter(rules: readonly LoadedRule[]): OpenPaths | undefined {
  const exact = new Set<string>();
  const prefixes = new Set<string>();
  const names = new Set<string>();
  for (const r of rules) {
    if (r.source !== 'syscall' || !r.enabled) continue;
    if (readsEvtNum(r)) return undefined;
    for (const t of PATH_FILTERED) {
      if (r.evttypes && r.evttypes.size > 0 && !r.evttypes.has(t)) continue;
      const v = judge(r.condition, t);
      if (v.t === 'false') continue;
      if (v.t !== 'paths') return undefined;
      for (const p of v.exact) exact.add(p);
      for (const p of v.prefixes) prefixes.add(p);
      for (const n of v.names) names.add(n);
    }
  }
  const all = [...exact, ...prefixes];
  if (all.some((p) => Buffer.byteLength(p) > MAX_FILTER_PATH) || [...prefixes].some((p) => p === '' || p === '/')) return undefined;
  return { exact: [...exact].sort(), prefixes: [...prefixes].sort(), names: [...names].sort() };
}
