// The event-generator suite loader: a YAML description (falcosecurity/event-generator
// docs/event-generator_suite_yaml.md and pkg/test/loader/schema/jsonschemas/) read into checked
// tests, with templates expanded. Consumes the file's text (or an already parsed yaml Document);
// produces SuiteTest[] or throws a SuiteError located as file:line:col.
//
// Upstream facts kept here: a test with `cases` is a template, one test per vector case and per
// matrix combination, named `<name>_testCase#<index>` counting across all its cases; `%{ item.KEY }`
// is replaced in every string (a string that is only the placeholder takes the value as it is,
// a map or null included, which is how `runIf: %{ item.runIf }` gets its condition); resource and
// step names are unique within a test; capabilities only on the leaf; no env key starting with
// FALCO_EVENT_GENERATOR_ or equal to SUITE.
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

/** A description error with its place: `file:line:col: message`. */
class SuiteError extends Error {}

/** One process of `context.processes` (or a `process` resource). */
export interface ProcessSpec {
  exePath?: string;
  args?: string;
  exe?: string;
  name?: string;
  env?: Record<string, string>;
  user?: string;
  capabilities?: string;
}

/** A `runIf` condition on the machine: `{arch: {op: eq|ne, val}}`. */
interface RunIf {
  arch?: { op: 'eq' | 'ne'; val: string };
}

/** One test, expanded (a template's case is a test of its own). */
export interface SuiteTest {
  name: string;
  rule?: string;
  description?: string;
  /** `file:line:col` of the test's entry, for reports. */
  at: string;
  runIf?: RunIf | null;
  context?: { processes?: ProcessSpec[]; container?: Record<string, unknown> | null };
  before?: string;
  after?: string;
  resources: Array<Record<string, unknown> & { type: string; name: string }>;
  steps: Array<Record<string, unknown> & { type: string; name: string; syscall: string; args: Record<string, unknown> }>;
  expectedOutcome?: { source?: string; hostname?: string; priority?: string; outputFields?: Record<string, string> };
  /** The case's values, for a test expanded from a template. */
  case?: Record<string, unknown>;
}

const TEST_KEYS = ['name', 'rule', 'description', 'runner', 'runIf', 'context', 'before', 'after', 'resources', 'steps', 'expectedOutcome', 'cases'];
const PROCESS_KEYS = ['exePath', 'args', 'exe', 'name', 'procName', 'env', 'user', 'capabilities'];
const OUTCOME_KEYS = ['source', 'hostname', 'priority', 'outputFields'];
/**
 * The keys of a fileless process resource: upstream's process resource with `fileLess: true` runs
 * its program from a memfd, and then supports no field but exe, args and env (event-generator
 * PR #313), since there is no executable path to name.
 */
const FILELESS_KEYS = ['type', 'name', 'fileLess', 'exe', 'args', 'env'];

/** Whether a parsed document (plain data) has the shape of a suite: a `tests` list whose entries carry a runner. */
export function looksLikeSuite(data: unknown): boolean {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
  const tests = (data as { tests?: unknown }).tests;
  return Array.isArray(tests) && tests.some((t) => typeof t === 'object' && t !== null && 'runner' in t);
}

/** Locates nodes of one document. */
class Where {
  constructor(
    private readonly file: string,
    private readonly lc: LineCounter | undefined,
  ) {}
  at(node: Node | null | undefined): string {
    const off = node?.range?.[0];
    if (off === undefined || !this.lc) return `${this.file}:1:1`;
    const p = this.lc.linePos(off);
    return `${this.file}:${p.line}:${p.col}`;
  }
  fail(node: Node | null | undefined, message: string): never {
    throw new SuiteError(`${this.at(node)}: ${message}`);
  }
}

function entries(w: Where, node: Node | null | undefined, what: string): Array<[string, Node | null]> {
  if (!isMap(node)) return w.fail(node, `${what}: expected a mapping`);
  return node.items.map((p) => {
    const k = isScalar(p.key) ? String(p.key.value) : w.fail(p.key as Node, `${what}: expected a plain key`);
    return [k, (p.value ?? null) as Node | null];
  });
}

function checkKeys(w: Where, node: Node | null, allowed: readonly string[], what: string): void {
  for (const p of isMap(node) ? node.items : []) {
    const k = isScalar(p.key) ? String(p.key.value) : '';
    if (!allowed.includes(k)) w.fail(p.key as Node, `${what}: unknown key '${k}' (expected one of ${allowed.join(', ')})`);
  }
}

function str(w: Where, node: Node | null | undefined, what: string): string {
  if (!isScalar(node) || typeof node.value === 'object') return w.fail(node, `${what}: expected a string`);
  return String(node.value);
}

function stringMap(w: Where, node: Node | null, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of entries(w, node, what)) out[k] = str(w, v, `${what}.${k}`);
  return out;
}

function reservedEnv(w: Where, node: Node | null, what: string): void {
  for (const [k] of entries(w, node, what)) {
    if (k.startsWith('FALCO_EVENT_GENERATOR_') || k === 'SUITE') w.fail(node, `${what}: the key '${k}' is reserved (FALCO_EVENT_GENERATOR_* and SUITE carry the test id and description)`);
  }
}

/** `%{ item.KEY }` substituted in every string of a plain value. */
function substitute(value: unknown, item: Record<string, unknown>, fail: (m: string) => never): unknown {
  if (typeof value === 'string') {
    const whole = /^%\{\s*item\.([\w-]+)\s*\}$/.exec(value);
    if (whole) {
      if (!Object.hasOwn(item, whole[1]!)) fail(`no case value '${whole[1]}'`);
      return item[whole[1]!];
    }
    return value.replace(/%\{\s*item\.([\w-]+)\s*\}/g, (_m, k: string) => {
      if (!Object.hasOwn(item, k)) fail(`no case value '${k}'`);
      const v = item[k];
      return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, item, fail));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, item, fail)]));
  return value;
}

/** The cases of a template, in upstream's order: a vector spec gives one, a matrix spec its combinations (first key slowest). */
function expandCases(w: Where, node: Node | null): Array<Record<string, unknown>> {
  if (!isSeq(node) || node.items.length === 0) return w.fail(node, 'cases: expected a non-empty list');
  const out: Array<Record<string, unknown>> = [];
  let keys: string | undefined;
  for (const spec of node.items as Node[]) {
    checkKeys(w, spec, ['strategy', 'values'], 'case');
    const m = Object.fromEntries(entries(w, spec, 'case'));
    const strategy = str(w, m.strategy, 'case.strategy');
    const values = m.values ?? w.fail(spec, 'case: values is required');
    const pairs = entries(w, values, 'case.values');
    const k = pairs
      .map(([key]) => key)
      .sort()
      .join(',');
    if (keys !== undefined && k !== keys) w.fail(values, `case.values: every case of a template declares the same keys (${keys.split(',').join(', ')}), not ${k.split(',').join(', ')}`);
    keys = k;
    if (strategy === 'vector') out.push(Object.fromEntries(pairs.map(([key, v]) => [key, v === null ? null : v.toJSON()])));
    else if (strategy === 'matrix') {
      let combos: Array<Record<string, unknown>> = [{}];
      for (const [key, v] of pairs) {
        if (!isSeq(v) || v.items.length === 0) w.fail(v, `case.values.${key}: a matrix value is a non-empty list`);
        const vals = (v.toJSON() as unknown[]) ?? [];
        combos = combos.flatMap((c) => vals.map((x) => ({ ...c, [key]: x })));
      }
      out.push(...combos);
    } else w.fail(m.strategy, `case.strategy: expected vector or matrix, not '${strategy}'`);
  }
  return out;
}

function checkRunIf(at: string, v: unknown): RunIf | null | undefined {
  if (v === undefined || v === null) return v as null | undefined;
  const bad = () => {
    throw new SuiteError(`${at}: runIf: expected null or {arch: {op: eq|ne, val: ARCH}}, not ${JSON.stringify(v)}`);
  };
  if (typeof v !== 'object' || Array.isArray(v)) return bad();
  const arch = (v as RunIf).arch;
  if (Object.keys(v).some((k) => k !== 'arch') || !arch || !['eq', 'ne'].includes(arch.op) || typeof arch.val !== 'string') return bad();
  return v as RunIf;
}

function checkProcess(w: Where, node: Node | null, what: string, leaf: boolean): ProcessSpec {
  checkKeys(w, node, PROCESS_KEYS, what);
  const out: ProcessSpec = {};
  for (const [k, v] of entries(w, node, what)) {
    if (k === 'env') {
      reservedEnv(w, v, `${what}.env`);
      out.env = stringMap(w, v, `${what}.env`);
    } else if (k === 'capabilities' && !leaf) w.fail(v, `${what}.capabilities: capabilities can be set only on the leaf process of the chain`);
    else if (k === 'procName') out.name = str(w, v, `${what}.procName`);
    else (out as Record<string, string>)[k] = str(w, v, `${what}.${k}`);
  }
  return out;
}

/** Checks one expanded test (plain data) and gives it its shape. */
function checkTest(w: Where, node: Node, data: Record<string, unknown>, name: string, kase?: Record<string, unknown>): SuiteTest {
  const at = w.at(node);
  const m = Object.fromEntries(entries(w, node, 'test'));
  const test: SuiteTest = { name, at, resources: [], steps: [] };
  if (kase) test.case = kase;
  const text = (k: string): string | undefined => {
    const v = data[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') w.fail(m[k], `test ${name}: ${k}: expected a string`);
    return v;
  };
  if (text('runner') !== 'HostRunner') w.fail(m.runner ?? node, `test ${name}: runner: expected HostRunner (the only runner upstream has)`);
  test.rule = text('rule');
  test.description = text('description');
  test.before = text('before');
  test.after = text('after');
  test.runIf = checkRunIf(w.at(m.runIf ?? node), data.runIf);
  const ctx = m.context;
  if (ctx) {
    checkKeys(w, ctx, ['processes', 'container'], 'context');
    const c = data.context as { processes?: unknown[]; container?: Record<string, unknown> | null };
    test.context = {};
    const cm = Object.fromEntries(entries(w, ctx, 'context'));
    if (cm.processes) {
      if (!isSeq(cm.processes)) w.fail(cm.processes, 'context.processes: expected a list');
      const n = cm.processes.items.length;
      test.context.processes = (cm.processes.items as Node[]).map((p, i) => checkProcess(w, p, `context.processes[${i}]`, i === n - 1));
      // after substitution the values may differ: take them from the data
      test.context.processes = test.context.processes.map((p, i) => ({ ...p, ...(c.processes?.[i] as ProcessSpec) }));
    }
    if ('container' in c) {
      if (c.container !== null && (typeof c.container !== 'object' || Array.isArray(c.container))) w.fail(cm.container ?? ctx, 'context.container: expected a mapping or null');
      if (cm.container && isMap(cm.container)) {
        checkKeys(w, cm.container, ['image', 'name', 'env'], 'context.container');
        const env = Object.fromEntries(entries(w, cm.container, 'context.container')).env;
        if (env) reservedEnv(w, env, 'context.container.env');
      }
      test.context.container = (c.container ?? null) as Record<string, unknown> | null;
    }
  }
  const names = new Set<string>();
  const named = (list: 'resources' | 'steps') => {
    const seq = m[list];
    if (!seq) return [];
    if (!isSeq(seq)) w.fail(seq, `${list}: expected a list`);
    return (seq.items as Node[]).map((item, i) => {
      const v = (data[list] as Array<Record<string, unknown>>)[i]!;
      const what = `${list}[${i}]`;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) w.fail(item, `${what}: expected a mapping`);
      for (const k of ['type', 'name']) if (typeof v[k] !== 'string') w.fail(item, `${what}: ${k} is required (a string)`);
      if (names.has(v.name as string)) w.fail(item, `${what}: the name '${v.name}' is already used by a resource or step of this test`);
      names.add(v.name as string);
      if (list === 'resources' && v.type === 'process') checkKeys(w, item, v.fileLess === true ? FILELESS_KEYS : [...PROCESS_KEYS, 'type', 'fileLess'], v.fileLess === true ? `${what} (fileLess)` : what);
      if (list === 'resources' && v.type === 'process' && v.fileLess !== undefined && typeof v.fileLess !== 'boolean') w.fail(item, `${what}: fileLess: expected true or false, not ${JSON.stringify(v.fileLess)}`);
      if (list === 'resources' && !['fd', 'process', 'clientServer'].includes(v.type as string)) w.fail(item, `${what}: type: expected fd, process or clientServer, not '${v.type}'`);
      if (list === 'steps') {
        if (v.type !== 'syscall') w.fail(item, `${what}: type: expected syscall (the only step type upstream has), not '${v.type}'`);
        if (typeof v.syscall !== 'string') w.fail(item, `${what}: syscall is required (a string)`);
        if (v.args !== undefined && (typeof v.args !== 'object' || v.args === null || Array.isArray(v.args))) w.fail(item, `${what}: args: expected a mapping`);
      }
      return v;
    });
  };
  test.resources = named('resources') as SuiteTest['resources'];
  test.steps = named('steps').map((s) => ({ ...s, args: (s.args ?? {}) as Record<string, unknown> })) as SuiteTest['steps'];
  if (m.expectedOutcome) {
    checkKeys(w, m.expectedOutcome, OUTCOME_KEYS, 'expectedOutcome');
    const e = (data.expectedOutcome ?? {}) as Record<string, unknown>;
    const eo: NonNullable<SuiteTest['expectedOutcome']> = {};
    for (const k of ['source', 'hostname', 'priority'] as const) if (e[k] !== undefined) eo[k] = String(e[k]);
    if (e.outputFields !== undefined) {
      if (typeof e.outputFields !== 'object' || e.outputFields === null) w.fail(m.expectedOutcome, 'expectedOutcome.outputFields: expected a mapping');
      eo.outputFields = Object.fromEntries(Object.entries(e.outputFields).map(([k, v]) => [k, String(v)]));
    }
    test.expectedOutcome = eo;
  }
  return test;
}

/**
 * The tests of a description, templates expanded; throws a located SuiteError on any problem
 * (placed `file:1:1` without `lines`: a document built in memory).
 */
export function loadSuite(file: string, doc: Document, lines?: LineCounter): SuiteTest[] {
  const w = new Where(file, lines);
  const root = doc.contents as Node | null;
  checkKeys(w, root, ['tests'], 'description');
  const tests = Object.fromEntries(entries(w, root, 'description')).tests;
  if (!isSeq(tests) || tests.items.length === 0) return w.fail(tests ?? root, 'tests: expected a non-empty list');
  const out: SuiteTest[] = [];
  const seen = new Set<string>();
  for (const node of tests.items as Node[]) {
    checkKeys(w, node, TEST_KEYS, 'test');
    const m = Object.fromEntries(entries(w, node, 'test'));
    const name = str(w, m.name ?? w.fail(node, 'test: name is required'), 'test.name');
    const data = node.toJSON() as Record<string, unknown>;
    const { cases: _cases, ...body } = data;
    const expanded = m.cases ? expandCases(w, m.cases).map((item, i) => ({ name: `${name}_testCase#${i}`, item })) : [{ name, item: undefined }];
    for (const { name: n, item } of expanded) {
      if (seen.has(n)) w.fail(node, `test ${n}: the name is already used by another test of this description`);
      seen.add(n);
      const fail = (msg: string): never => w.fail(node, `test ${n}: ${msg}`);
      const concrete = item ? (substitute(body, item, fail) as Record<string, unknown>) : body;
      if (!item && JSON.stringify(body).match(/%\{\s*item\./)) w.fail(node, `test ${n}: uses %{ item.* } but has no cases`);
      out.push(checkTest(w, node, concrete, n, item));
    }
  }
  return out;
}
