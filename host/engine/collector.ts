// Collector: RulesItems of every file, in order, to the defined lists, macros and rules with
// Falco's define / append / override / enable semantics (reference/falco-language.md B.2-B.3,
// falco:userspace/engine/rule_loader_collector.cpp). Definition order is kept: a redefinition
// keeps the original index, and every definition or append moves the item's visibility.
import type { Diagnostics, Location } from './diagnostics.js';
import type { FieldNode, Operand, TransformerArg } from './ast.js';
import { resolveField, type Source } from './fields.js';
import { parseCondition } from './parser.js';
import { MappedText } from './mapped-text.js';
import { parsePriority, type Priority } from './priority.js';
import type { ExceptionItem, ListItem, MacroItem, PluginRequirement, RuleItem, RulesItem } from './reader.js';

/** The engine version rules files are checked against (Falco 0.45.1 = engine 0.63.0). */
export const ENGINE_VERSION = '0.63.0';

/** Sources this engine evaluates. Rules of other sources are skipped with LOAD_UNKNOWN_SOURCE. */
const KNOWN_SOURCES: readonly string[] = ['syscall', 'k8s_audit'];

export interface ListDef {
  name: string;
  items: string[];
  index: number;
  visibility: number;
  ctx: Location[];
  /** The file of the item that last defined, appended to or overrode it: a load problem of the definition is that file's. */
  file: string;
}

export interface MacroDef {
  name: string;
  cond: MappedText;
  condCtx: Location[];
  index: number;
  visibility: number;
  ctx: Location[];
  /** The file of the item that last defined, appended to or overrode it: a load problem of the definition is that file's. */
  file: string;
}

export interface ExceptionDef {
  name: string;
  fields: { list: boolean; items: string[] };
  comps: { list: boolean; items: string[] };
  values: Array<string | Array<string | string[]>>;
  ctx: Location[];
}

export interface RuleDef {
  name: string;
  cond: MappedText;
  condCtx: Location[];
  output: MappedText;
  outputCtx: Location[];
  desc: string;
  priority: Priority;
  source: string;
  enabled: boolean;
  tags: string[];
  exceptions: ExceptionDef[];
  warnEvttypes: boolean;
  skipIfUnknownFilter: boolean;
  unknownSource: boolean;
  index: number;
  visibility: number;
  ctx: Location[];
  /** The file of the item that last defined, appended to or overrode it: a load problem of the definition is that file's. */
  file: string;
}

export interface Collected {
  lists: ListDef[];
  macros: MacroDef[];
  rules: RuleDef[];
  requiredEngineVersions: string[];
  requiredPlugins: PluginRequirement[];
}

class CollectError {
  constructor(
    readonly code: 'LOAD_ERR_VALIDATE' | 'LOAD_ERR_YAML_VALIDATE',
    readonly message: string,
    readonly ctx: Location[],
  ) {}
}

/** Collects the items of all files, in file order. */
export function collect(items: RulesItem[], diags: Diagnostics): Collected {
  const c = new Collector(diags);
  for (const item of items) {
    try {
      c.add(item);
    } catch (e) {
      if (!(e instanceof CollectError)) throw e;
      diags.add(e.code, e.message, e.ctx);
    }
  }
  return c.result();
}

/** An ordered name -> definition table (Falco's indexed_vector). */
class Table<T extends { name: string }> {
  readonly byName = new Map<string, T>();
  readonly order: T[] = [];
  get(name: string): T | undefined {
    return this.byName.get(name);
  }
  put(def: T): void {
    const prev = this.byName.get(def.name);
    if (prev) this.order[this.order.indexOf(prev)] = def;
    else this.order.push(def);
    this.byName.set(def.name, def);
  }
}

class Collector {
  private next = 0;
  private readonly lists = new Table<ListDef>();
  private readonly macros = new Table<MacroDef>();
  private readonly rules = new Table<RuleDef>();
  private readonly engineVersions: string[] = [];
  private readonly plugins: PluginRequirement[] = [];

  constructor(private readonly diags: Diagnostics) {}

  result(): Collected {
    return {
      lists: this.lists.order,
      macros: this.macros.order,
      rules: this.rules.order,
      requiredEngineVersions: this.engineVersions,
      requiredPlugins: this.plugins,
    };
  }

  add(item: RulesItem): void {
    switch (item.kind) {
      case 'required_engine_version':
        return this.engineVersion(item.version, item.ctx);
      case 'required_plugin_versions':
        this.plugins.push(...item.plugins);
        return;
      case 'list':
        return this.list(item);
      case 'macro':
        return this.macro(item);
      case 'rule':
        return this.rule(item);
    }
  }

  private engineVersion(v: string, ctx: Location[]): void {
    const req = parseEngineVersion(v);
    if (!req) {
      throw new CollectError('LOAD_ERR_YAML_VALIDATE', `Unable to parse engine version '${v}' as a semver string. Expected "x.y.z" semver format.`, ctx);
    }
    const engine = parseEngineVersion(ENGINE_VERSION)!;
    if (req[0] !== engine[0] || compareVersions(engine, req) < 0) {
      throw new CollectError('LOAD_ERR_VALIDATE', `Rules require engine version ${req.join('.')}, but engine version is ${ENGINE_VERSION}`, ctx);
    }
    this.engineVersions.push(req.join('.'));
  }

  private list(item: ListItem): void {
    const id = this.next++;
    const prev = this.lists.get(item.name);
    if (item.append || item.override === 'append') {
      if (!prev) throw new CollectError('LOAD_ERR_VALIDATE', "List uses 'append' or 'override.items: append' but no list by that name already exists", item.ctx);
      this.lists.put({ ...prev, items: [...prev.items, ...item.items], visibility: id, file: fileOf(item) });
      return;
    }
    this.lists.put({ name: item.name, items: item.items, index: prev?.index ?? id, visibility: id, ctx: item.ctx, file: fileOf(item) });
  }

  private macro(item: MacroItem): void {
    const id = this.next++;
    const prev = this.macros.get(item.name);
    if (item.append || item.override === 'append') {
      if (!prev) throw new CollectError('LOAD_ERR_VALIDATE', "Macro uses 'append' or 'override.condition: append' but no macro by that name already exists", item.ctx);
      this.macros.put({ ...prev, cond: MappedText.concat([prev.cond, ' ', item.condition]), visibility: id, file: fileOf(item) });
      return;
    }
    this.macros.put({ name: item.name, cond: item.condition, condCtx: item.condCtx, index: prev?.index ?? id, visibility: id, ctx: item.ctx, file: fileOf(item) });
  }

  private rule(item: RuleItem): void {
    const id = this.next++;
    const prev = this.rules.get(item.name);
    const hasBody = item.condition !== undefined || item.output !== undefined || item.desc !== undefined || item.priority !== undefined;
    if (item.override) return this.overrideRule(item, prev, id);
    if (item.append) return this.appendRule(item, prev, id);
    if (!hasBody && item.enabled !== undefined) {
      if (!prev) throw new CollectError('LOAD_ERR_VALIDATE', "Rule has 'enabled' key but no rule by that name already exists", item.ctx);
      this.diags.add('LOAD_DEPRECATED_ITEM', "The standalone 'enabled' key usage is deprecated. The correct approach requires also a 'replace' entry under the 'override' key (i.e. 'enabled: replace').", item.ctx);
      this.rules.put({ ...prev, enabled: item.enabled, file: fileOf(item) });
      return;
    }
    for (const key of ['condition', 'output', 'desc', 'priority'] as const) {
      if (item[key] === undefined) throw new CollectError('LOAD_ERR_YAML_VALIDATE', `Item has no mapping for key '${key}'`, item.ctx);
    }
    const source = item.source ?? 'syscall';
    if (prev && prev.source !== source) throw new CollectError('LOAD_ERR_VALIDATE', 'Rule has been re-defined with a different source', item.ctx);
    const unknownSource = !KNOWN_SOURCES.includes(source);
    if (unknownSource) this.diags.add('LOAD_UNKNOWN_SOURCE', `Unknown source ${source}, skipping`, item.ctx);
    const exceptions = (item.exceptions ?? []).map((e) => this.validateException(e, false, unknownSource ? undefined : source));
    this.warnDuplicateExceptions(exceptions);
    this.rules.put({
      name: item.name,
      cond: item.condition!,
      condCtx: item.condCtx,
      output: trimMapped(item.output!),
      outputCtx: item.outputCtx,
      desc: item.desc!,
      priority: this.priority(item),
      source,
      enabled: item.enabled ?? true,
      tags: sortedTags(item.tags ?? []),
      exceptions,
      warnEvttypes: item.warnEvttypes ?? true,
      skipIfUnknownFilter: item.skipIfUnknownFilter ?? false,
      unknownSource,
      index: prev?.index ?? id,
      visibility: id,
      ctx: item.ctx,
      file: fileOf(item),
    });
  }

  private priority(item: RuleItem): Priority {
    const p = parsePriority(item.priority ?? '');
    if (!p) throw new CollectError('LOAD_ERR_YAML_VALIDATE', 'Invalid priority', item.priorityCtx);
    return p;
  }

  private checkSource(item: RuleItem, prev: RuleDef): void {
    if (item.source && item.source !== prev.source) throw new CollectError('LOAD_ERR_VALIDATE', 'Rule has been re-defined with a different source', item.ctx);
  }

  private appendRule(item: RuleItem, prev: RuleDef | undefined, id: number): void {
    if (!prev) throw new CollectError('LOAD_ERR_VALIDATE', "Rule uses 'append' or 'override.<key>: append' but no rule by that name already exists", item.ctx);
    this.checkSource(item, prev);
    if (item.condition === undefined && item.exceptions === undefined) {
      throw new CollectError('LOAD_ERR_VALIDATE', 'Appended rule must have exceptions or condition property', item.ctx);
    }
    const next: RuleDef = { ...prev, visibility: id, file: fileOf(item) };
    if (item.condition) next.cond = MappedText.concat([prev.cond, ' ', item.condition]);
    if (item.exceptions) next.exceptions = this.mergeExceptions(prev, item.exceptions);
    this.rules.put(next);
  }

  private overrideRule(item: RuleItem, prev: RuleDef | undefined, id: number): void {
    const ov = item.override!;
    if (!prev) {
      const [key, op] = Object.entries(ov)[0] ?? ['condition', 'append'];
      const msg = op === 'append' ? `Rule uses 'append' or 'override.${key}: append' but no rule by that name already exists` : `An 'override.${key}: replace' to a rule was requested but no rule by that name already exists`;
      throw new CollectError('LOAD_ERR_VALIDATE', msg, item.ctx);
    }
    this.checkSource(item, prev);
    const next: RuleDef = { ...prev, visibility: id, file: fileOf(item) };
    const join = (a: MappedText, b: MappedText) => MappedText.concat([a, ' ', b]);
    for (const [key, op] of Object.entries(ov)) {
      const append = op === 'append';
      switch (key) {
        case 'condition':
          next.cond = append ? join(prev.cond, item.condition!) : item.condition!;
          if (!append) next.condCtx = item.condCtx;
          break;
        case 'output':
          next.output = trimMapped(append ? join(prev.output, item.output!) : item.output!);
          if (!append) next.outputCtx = item.outputCtx;
          break;
        case 'desc':
          next.desc = append ? `${prev.desc} ${item.desc}` : item.desc!;
          break;
        case 'tags':
          next.tags = sortedTags(append ? [...prev.tags, ...item.tags!] : item.tags!);
          break;
        case 'exceptions':
          next.exceptions = append ? this.mergeExceptions(prev, item.exceptions!) : item.exceptions!.map((e) => this.validateException(e, false, knownSource(prev)));
          break;
        case 'priority':
          next.priority = this.priority(item);
          break;
        case 'enabled':
          next.enabled = item.enabled!;
          break;
        case 'warn_evttypes':
          next.warnEvttypes = item.warnEvttypes!;
          break;
        case 'skip-if-unknown-filter':
          next.skipIfUnknownFilter = item.skipIfUnknownFilter!;
          break;
        default:
          break; // capture, capture_duration: accepted, no effect on this engine
      }
    }
    this.rules.put(next);
  }

  private mergeExceptions(rule: RuleDef, added: ExceptionItem[]): ExceptionDef[] {
    const out = rule.exceptions.map((e) => ({ ...e }));
    for (const ex of added) {
      const existing = out.find((e) => e.name === ex.name);
      if (existing) {
        if (ex.fields || ex.comps) throw new CollectError('LOAD_ERR_VALIDATE', 'Can not append exception fields to existing exception, only values', ex.ctx);
        if (!ex.values || ex.values.length === 0) this.diags.add('LOAD_APPEND_NO_VALUES', 'Overriding/appending exception with no values', ex.ctx);
        existing.values = [...existing.values, ...(ex.values ?? [])];
      } else {
        out.push(this.validateException(ex, true, knownSource(rule)));
      }
    }
    return out;
  }

  private warnDuplicateExceptions(exs: ExceptionDef[]): void {
    const seen = new Set<string>();
    for (const e of exs) {
      if (seen.has(e.name)) this.diags.add('LOAD_EXCEPTION_NAME_NOT_UNIQUE', 'Multiple definitions of exception', e.ctx);
      seen.add(e.name);
    }
  }

  /** Falco's validate_exception_info: fields present and known to the source (when it is known), comps defaulted, lengths equal. */
  private validateException(ex: ExceptionItem, appending: boolean, source: string | undefined): ExceptionDef {
    if (!ex.fields) {
      const msg = appending ? 'Rule exception must have fields property with a list of fields' : 'Rule exception must have fields property with a list of fields';
      throw new CollectError('LOAD_ERR_VALIDATE', msg, ex.ctx);
    }
    // Falco accepts a comparison written with surrounding blanks (` = `): it is compared trimmed
    // and goes into the generated condition as written, where the blanks are harmless.
    let comps = ex.comps && { list: ex.comps.list, items: ex.comps.items.map((c) => c.trim()) };
    if (ex.fields.list) {
      comps ??= { list: true, items: ex.fields.items.map(() => '=') };
      if (!comps.list || comps.items.length !== ex.fields.items.length) {
        throw new CollectError('LOAD_ERR_VALIDATE', 'Fields and comps lists must have equal length', ex.ctx);
      }
    } else {
      comps ??= { list: false, items: ['in'] };
      const c = comps.items[0] ?? '';
      if (comps.list || !(['in', 'pmatch', 'intersects'].includes(c) || / (oneof|anyof|allof)$/.test(c))) {
        throw new CollectError('LOAD_ERR_VALIDATE', 'When fields is a single value, comps must be one of (in, pmatch, intersects) or a modifier operator (e.g. startswith oneof)', ex.ctx);
      }
    }
    for (const c of comps.items) {
      if (!SUPPORTED_COMPS.has(c) && !isModifierComp(c)) throw new CollectError('LOAD_ERR_VALIDATE', `'${c}' is not a supported comparison operator`, ex.ctx);
    }
    if (source !== undefined) {
      for (const f of ex.fields.items) {
        if (!isFieldDefined(source, f)) throw new CollectError('LOAD_ERR_VALIDATE', `'${f}' is not a supported filter field`, ex.ctx);
      }
    }
    const values = ex.values ?? [];
    if (ex.fields.list) {
      for (const v of values) {
        if (!Array.isArray(v) || v.length !== ex.fields.items.length) {
          throw new CollectError('LOAD_ERR_VALIDATE', 'Fields and values lists must have equal length', ex.ctx);
        }
      }
    }
    return { name: ex.name, fields: ex.fields, comps, values, ctx: ex.ctx };
  }
}

const SUPPORTED_COMPS = new Set(['=', '==', '!=', '<', '<=', '>', '>=', 'contains', 'icontains', 'bcontains', 'startswith', 'bstartswith', 'endswith', 'glob', 'iglob', 'regex', 'in', 'intersects', 'pmatch', 'exists']);
const MODIFIER_OPS = new Set(['=', '==', '!=', 'contains', 'icontains', 'bcontains', 'startswith', 'bstartswith', 'endswith', 'glob', 'iglob', 'regex']);

function isModifierComp(c: string): boolean {
  const m = /^(\S+) (oneof|anyof|allof)$/.exec(c);
  return m !== null && MODIFIER_OPS.has(m[1]!);
}

function fileOf(item: RulesItem): string {
  return item.ctx[0]?.position.name ?? '';
}

/** The rule's source when this engine has its fields (exception fields are checked against it). */
function knownSource(rule: RuleDef): string | undefined {
  return rule.unknownSource ? undefined : rule.source;
}

/**
 * Falco's is_field_defined: the exception field (`proc.name`, `proc.aname[2]`, or a transformer
 * such as `tolower(proc.name)`) parses as an operand and every field in it names a field of the
 * source; arguments are checked later, with the condition.
 */
function isFieldDefined(source: string, field: string): boolean {
  const parsed = parseCondition(`${field} exists`);
  if (!parsed.ok || parsed.expr.kind !== 'unary') return false;
  const fieldsOf = (o: Operand | TransformerArg): FieldNode[] => (o.kind === 'field' ? [o] : o.kind === 'transformer' ? o.args.flatMap(fieldsOf) : o.kind === 'tr-list' ? o.items.flatMap(fieldsOf) : []);
  return fieldsOf(parsed.expr.left).every((f) => {
    const r = resolveField(source as Source, f.name, f.arg);
    return r.ok || !r.message.includes('nonexistent field');
  });
}

function sortedTags(tags: string[]): string[] {
  return [...new Set(tags)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function trimMapped(t: MappedText): MappedText {
  const start = t.text.length - t.text.trimStart().length;
  const end = t.text.trimEnd().length;
  return start === 0 && end === t.text.length ? t : t.slice(start, Math.max(start, end));
}

function parseEngineVersion(v: string): [number, number, number] | undefined {
  if (/^\d+$/.test(v)) return [0, Number(v), 0];
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
