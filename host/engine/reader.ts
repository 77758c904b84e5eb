// Reader: one rules file (YAML text) to located RulesItems (reference/falco-language.md B.1-B.2,
// falco:userspace/engine/rule_loader_reader.cpp). Structure errors become diagnostics; an item
// with an error is dropped and reading goes on with the next one.
import { isMap, isScalar, isSeq, parseAllDocuments, type Node, type Pair, type Scalar, type YAMLMap } from 'yaml';
import type { Diagnostics, ItemType, Location } from './diagnostics.js';
import { MappedText } from './mapped-text.js';
import type { SourceText } from './source-text.js';

/** A string value from the file, with the origin of each character. */
type Located = MappedText;

type OverrideOp = 'append' | 'replace';

export interface ExceptionItem {
  name: string;
  fields?: { list: boolean; items: string[] };
  comps?: { list: boolean; items: string[] };
  /** Each value is a tuple (list form) whose elements are strings or lists of strings, or a plain string (string form). */
  values?: Array<string | Array<string | string[]>>;
  ctx: Location[];
}

export interface PluginRequirement {
  name: string;
  version: string;
  alternatives: Array<{ name: string; version: string }>;
}

interface ItemBase {
  ctx: Location[];
}

interface EngineVersionItem extends ItemBase {
  kind: 'required_engine_version';
  version: string;
}

interface PluginVersionsItem extends ItemBase {
  kind: 'required_plugin_versions';
  plugins: PluginRequirement[];
}

export interface ListItem extends ItemBase {
  kind: 'list';
  name: string;
  items: string[];
  append: boolean;
  override?: OverrideOp;
}

export interface MacroItem extends ItemBase {
  kind: 'macro';
  name: string;
  condition: Located;
  condCtx: Location[];
  append: boolean;
  override?: OverrideOp;
}

/** Keys of a rule item that override may name. */
type RuleKey = 'condition' | 'output' | 'desc' | 'priority' | 'tags' | 'exceptions' | 'enabled' | 'warn_evttypes' | 'skip-if-unknown-filter' | 'capture' | 'capture_duration' | 'source';

export interface RuleItem extends ItemBase {
  kind: 'rule';
  name: string;
  condition?: Located;
  condCtx: Location[];
  output?: Located;
  outputCtx: Location[];
  desc?: string;
  priority?: string;
  priorityCtx: Location[];
  source?: string;
  enabled?: boolean;
  tags?: string[];
  exceptions?: ExceptionItem[];
  warnEvttypes?: boolean;
  skipIfUnknownFilter?: boolean;
  capture?: boolean;
  captureDuration?: number;
  append: boolean;
  override?: Partial<Record<RuleKey, OverrideOp>>;
}

export type RulesItem = EngineVersionItem | PluginVersionsItem | ListItem | MacroItem | RuleItem;

const ITEM_KINDS = ['required_engine_version', 'required_plugin_versions', 'list', 'macro', 'rule'] as const;
const KNOWN_KEYS: Record<string, readonly string[]> = {
  required_engine_version: ['required_engine_version'],
  required_plugin_versions: ['required_plugin_versions'],
  list: ['list', 'items', 'append', 'override'],
  macro: ['macro', 'condition', 'append', 'override'],
  rule: ['rule', 'condition', 'output', 'desc', 'priority', 'source', 'enabled', 'tags', 'exceptions', 'warn_evttypes', 'skip-if-unknown-filter', 'capture', 'capture_duration', 'append', 'override'],
};

/** Thrown inside one item and caught at the item boundary: never crosses the stage. */
class ItemError {
  constructor(
    readonly code: 'LOAD_ERR_YAML_VALIDATE' | 'LOAD_ERR_VALIDATE',
    readonly message: string,
    readonly ctx: Location[],
  ) {}
}

/** Reads one rules file; problems go to `diags`. */
export function readRulesFile(src: SourceText, diags: Diagnostics): RulesItem[] {
  const top: Location = { itemType: 'rules content', itemName: '', position: src.position(0) };
  const docs = parseAllDocuments(src.text, { prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  let parseErrors = 0;
  for (const doc of list) {
    for (const err of doc.errors) {
      diags.add('LOAD_ERR_YAML_PARSE', err.message.split('\n')[0]!, [top, at(src, 'rules content', '', err.pos[0])]);
      parseErrors++;
    }
  }
  // Only this file's syntax errors stop its reading: `diags` also holds the earlier files' problems.
  if (parseErrors > 0) return [];
  const items: RulesItem[] = [];
  for (const doc of list) {
    const root = doc.contents;
    if (root === null || (isScalar(root) && root.value === null)) continue;
    if (!isSeq(root)) {
      const msg = isMap(root) ? 'Rules content is not yaml array of objects' : 'Rules content is not yaml';
      diags.add('LOAD_ERR_YAML_VALIDATE', msg, [top, at(src, 'rules content', '', root.range?.[0] ?? 0)]);
      continue;
    }
    for (const node of root.items as Array<Node | null>) {
      if (node === null || (isScalar(node) && node.value === null)) continue;
      const itemCtx = [top, at(src, 'rules content item', '', node.range?.[0] ?? 0)];
      try {
        const item = readItem(src, node, itemCtx, diags);
        if (item) items.push(item);
      } catch (e) {
        if (!(e instanceof ItemError)) throw e;
        diags.add(e.code, e.message, e.ctx);
      }
    }
  }
  return items;
}

function keyLoc(src: SourceText, pair: Pair<unknown, unknown>, name: string): Location {
  return at(src, 'value for', name, (pair.key as Node | null)?.range?.[0] ?? 0);
}

function at(src: SourceText, itemType: ItemType, itemName: string, offset: number): Location {
  return { itemType, itemName, position: src.position(offset) };
}

function readItem(src: SourceText, node: Node, itemCtx: Location[], diags: Diagnostics): RulesItem | undefined {
  if (!isMap(node)) {
    throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Unexpected element type. Each element should be a yaml associative array.', itemCtx);
  }
  const map = node as YAMLMap<unknown, unknown>;
  const keys = new Map<string, Pair<unknown, unknown>>();
  for (const pair of map.items) {
    const k = isScalar(pair.key) ? String(pair.key.value) : '';
    keys.set(k, pair);
  }
  const kind = ITEM_KINDS.find((k) => keys.has(k));
  if (!kind) {
    diags.add('LOAD_UNKNOWN_ITEM', 'Unknown top level item', itemCtx);
    return undefined;
  }
  const r = new ItemReader(src, keys, itemCtx);
  for (const [k, pair] of keys) {
    if (!KNOWN_KEYS[kind]!.includes(k)) {
      // Falco only warns (LOAD_UNKNOWN_KEY); here a misspelt key is an error, so a typo such as
      // `enable: false` cannot silently leave a rule on.
      const known = KNOWN_KEYS[kind]!.join(', ');
      diags.add('LOAD_ERR_YAML_VALIDATE', `Unknown key '${k}' in ${kind} item (known keys: ${known})`, [...itemCtx, keyLoc(src, pair, k)]);
    }
  }
  switch (kind) {
    case 'required_engine_version':
      return { kind, version: r.scalar('required_engine_version', true)!, ctx: [...itemCtx.slice(0, 1), r.locOf(keys.get(kind)!, 'required_engine_version', '')] };
    case 'required_plugin_versions':
      return readPluginVersions(r, itemCtx);
    case 'list':
      return readList(r, itemCtx, diags);
    case 'macro':
      return readMacro(r, itemCtx, diags);
    case 'rule':
      return readRule(r, itemCtx, diags);
  }
}

/** Typed access to the keys of one mapping, with Falco's validation messages. */
class ItemReader {
  constructor(
    readonly src: SourceText,
    readonly keys: Map<string, Pair<unknown, unknown>>,
    readonly ctx: Location[],
  ) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  locOf(pair: Pair<unknown, unknown>, itemType: ItemType, name: string): Location {
    const n = (pair.value ?? pair.key) as Node | null;
    return at(this.src, itemType, name, n?.range?.[0] ?? 0);
  }

  /** Location of a key's value, named as Falco does (`value for 'key'`). */
  valueCtx(key: string): Location[] {
    const pair = this.keys.get(key);
    return pair ? [...this.ctx, this.locOf(pair, 'value for', key)] : this.ctx;
  }

  private fail(key: string, message: string): never {
    throw new ItemError('LOAD_ERR_YAML_VALIDATE', message, this.valueCtx(key));
  }

  private scalarNode(key: string, required: boolean): Scalar | undefined {
    const pair = this.keys.get(key);
    if (!pair) {
      if (required) throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Item has no mapping for key '${key}'`, this.ctx);
      return undefined;
    }
    const v = pair.value as Node | null;
    if (v === null || (isScalar(v) && v.value === null)) this.fail(key, `Mapping for key '${key}' is empty`);
    if (!isScalar(v)) this.fail(key, 'Value is not a scalar value');
    return v;
  }

  /** The scalar's text as written (numbers and booleans keep their source spelling). */
  scalarText(node: Scalar): string {
    if (typeof node.value === 'string') return node.value;
    const [s, e] = node.range ?? [0, 0];
    return this.src.text.slice(s, e).trim();
  }

  scalar(key: string, required: boolean, nonEmpty = false): string | undefined {
    const node = this.scalarNode(key, required);
    if (!node) return undefined;
    const s = this.scalarText(node);
    if (nonEmpty && s === '') this.fail(key, 'Value must be non-empty');
    return s;
  }

  located(key: string, required: boolean, nonEmpty = false): Located | undefined {
    const node = this.scalarNode(key, required);
    if (!node) return undefined;
    const s = this.scalarText(node);
    if (nonEmpty && s === '') this.fail(key, 'Value must be non-empty');
    const [start, end] = node.range ?? [0, 0];
    return MappedText.fromScalar(s, this.src, start, end);
  }

  bool(key: string): boolean | undefined {
    const node = this.scalarNode(key, false);
    if (!node) return undefined;
    if (typeof node.value === 'boolean') return node.value;
    const s = this.scalarText(node).toLowerCase();
    if (['true', 'yes', 'on', 'y'].includes(s)) return true;
    if (['false', 'no', 'off', 'n'].includes(s)) return false;
    this.fail(key, "Can't decode YAML scalar value");
  }

  seq(key: string, required: boolean): Node[] | undefined {
    const pair = this.keys.get(key);
    if (!pair) {
      if (required) throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Item has no mapping for key '${key}'`, this.ctx);
      return undefined;
    }
    const v = pair.value as Node | null;
    if (v === null || (isScalar(v) && v.value === null)) {
      if (required) this.fail(key, `Mapping for key '${key}' is empty`);
      return [];
    }
    if (!isSeq(v)) this.fail(key, 'Value is not a sequence');
    return v.items as Node[];
  }

  /** A sequence of scalars as strings. */
  strings(key: string, required: boolean): string[] | undefined {
    const items = this.seq(key, required);
    if (!items) return undefined;
    return items.map((n) => {
      if (!isScalar(n) || n.value === null) this.fail(key, 'Value is not a scalar value');
      return this.scalarText(n);
    });
  }

  /** The `override:` mapping: key -> append | replace. */
  overrides(): Map<string, { op: OverrideOp; loc: Location }> | undefined {
    const pair = this.keys.get('override');
    if (!pair) return undefined;
    const v = pair.value as Node | null;
    if (!isMap(v)) this.fail('override', 'Value is not a map');
    const out = new Map<string, { op: OverrideOp; loc: Location }>();
    for (const p of (v as YAMLMap<unknown, unknown>).items) {
      const k = isScalar(p.key) ? String(p.key.value) : '';
      const val = p.value as Node | null;
      const op = isScalar(val) ? String(val.value) : '';
      const loc = at(this.src, 'overrides', '', (val ?? (p.key as Node))?.range?.[0] ?? 0);
      if (op !== 'append' && op !== 'replace') {
        throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Invalid override operation for key '${k}': '${op}'`, [...this.ctx, loc]);
      }
      out.set(k, { op, loc });
    }
    return out;
  }
}

/** The item's name, its named context, and a reader whose locations carry that context. */
function named(r0: ItemReader, kind: 'list' | 'macro' | 'rule', itemCtx: Location[]): { name: string; ctx: Location[]; r: ItemReader } {
  const name = r0.scalar(kind, true, true)!;
  const ctx = [itemCtx[0]!, { ...itemCtx[1]!, itemType: kind as ItemType, itemName: name }];
  return { name, ctx, r: new ItemReader(r0.src, r0.keys, ctx) };
}

function readPluginVersions(r: ItemReader, itemCtx: Location[]): PluginVersionsItem {
  const entries = r.seq('required_plugin_versions', true)!;
  const plugins: PluginRequirement[] = [];
  for (const e of entries) {
    const ctx = [...itemCtx, at(r.src, 'required plugin versions entry', '', e.range?.[0] ?? 0)];
    if (!isMap(e)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Unexpected element type. Each element should be a yaml associative array.', ctx);
    const keys = new Map<string, Pair<unknown, unknown>>();
    for (const p of (e as YAMLMap<unknown, unknown>).items) keys.set(isScalar(p.key) ? String(p.key.value) : '', p);
    const er = new ItemReader(r.src, keys, ctx);
    const alternatives: PluginRequirement['alternatives'] = [];
    for (const a of er.seq('alternatives', false) ?? []) {
      const actx = [...ctx, at(r.src, 'required plugin versions alternative', '', a.range?.[0] ?? 0)];
      if (!isMap(a)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Unexpected element type. Each element should be a yaml associative array.', actx);
      const akeys = new Map<string, Pair<unknown, unknown>>();
      for (const p of (a as YAMLMap<unknown, unknown>).items) akeys.set(isScalar(p.key) ? String(p.key.value) : '', p);
      const ar = new ItemReader(r.src, akeys, actx);
      alternatives.push({ name: ar.scalar('name', true, true)!, version: ar.scalar('version', true, true)! });
    }
    plugins.push({ name: er.scalar('name', true, true)!, version: er.scalar('version', true, true)!, alternatives });
  }
  return { kind: 'required_plugin_versions', plugins, ctx: itemCtx };
}

/** `append` and `override`, with the deprecation warning for `append: true` (given even when the pair is refused). */
function checkAppendOverride(r: ItemReader, ctx: Location[], diags: Diagnostics): { append: boolean; overrides?: Map<string, { op: OverrideOp; loc: Location }> } {
  const append = r.bool('append') ?? false;
  deprecatedAppend(r, ctx, diags, append);
  const overrides = r.overrides();
  if (append && overrides) {
    throw new ItemError('LOAD_ERR_YAML_VALIDATE', "Keys 'override' and 'append: true' cannot be used together. Add an 'append' entry (e.g. 'condition: append') under 'override' instead.", ctx);
  }
  return { append, overrides };
}

function deprecatedAppend(r: ItemReader, ctx: Location[], diags: Diagnostics, append: boolean): void {
  if (append) {
    diags.add('LOAD_DEPRECATED_ITEM', "'append' key is deprecated. Add an 'append' entry (e.g. 'condition: append') under 'override' instead.", r.valueCtx('append').length > ctx.length ? r.valueCtx('append') : ctx);
  }
}

/** The single overridable key of a list or macro, validated as Falco does. */
function singleOverride(r: ItemReader, ctx: Location[], overrides: Map<string, { op: OverrideOp; loc: Location }> | undefined, key: string): OverrideOp | undefined {
  if (!overrides) return undefined;
  for (const [k, { loc }] of overrides) {
    if (k !== key) throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Unexpected key '${k}': no corresponding entry under 'override' is defined.`, [...ctx, loc]);
  }
  const o = overrides.get(key);
  if (o && !r.has(key)) {
    throw new ItemError('LOAD_ERR_YAML_VALIDATE', `An ${o.op} override for '${key}' was specified but '${key}' is not defined`, [...ctx, o.loc]);
  }
  return o?.op;
}

const LIST_NAME = /^[^()"'\s=,]+$/;
const MACRO_NAME = /^[a-zA-Z]+[a-zA-Z0-9_]*$/;

function readList(r0: ItemReader, itemCtx: Location[], diags: Diagnostics): ListItem {
  const { name, ctx, r } = named(r0, 'list', itemCtx);
  if (!LIST_NAME.test(name)) diags.add('LOAD_INVALID_LIST_NAME', `List has an invalid name. List names should match a regular expression: [^()"'\\s=,]+`, ctx);
  const items = r.strings('items', true)!;
  // Falco warns about `append: true` before it checks the append/override conflict.
  const { append, overrides } = checkAppendOverride(r, ctx, diags);
  const override = singleOverride(r, ctx, overrides, 'items');
  return { kind: 'list', name, items, append, override, ctx };
}

function readMacro(r0: ItemReader, itemCtx: Location[], diags: Diagnostics): MacroItem {
  const { name, ctx, r } = named(r0, 'macro', itemCtx);
  if (!MACRO_NAME.test(name)) diags.add('LOAD_INVALID_MACRO_NAME', 'Macro has an invalid name. Macro names should match a regular expression: [a-zA-Z]+[a-zA-Z0-9_]*', ctx);
  const condition = r.located('condition', true)!;
  const { append, overrides } = checkAppendOverride(r, ctx, diags);
  const override = singleOverride(r, ctx, overrides, 'condition');
  const condCtx = [...ctx, { ...r.valueCtx('condition').at(-1)!, itemType: 'macro condition' as const, itemName: '' }];
  return { kind: 'macro', name, condition, condCtx, append, override, ctx };
}

const APPENDABLE: readonly RuleKey[] = ['condition', 'output', 'desc', 'tags', 'exceptions'];
const REPLACEABLE: readonly RuleKey[] = ['condition', 'output', 'desc', 'priority', 'capture', 'capture_duration', 'tags', 'exceptions', 'enabled', 'warn_evttypes', 'skip-if-unknown-filter'];

function readRule(r0: ItemReader, itemCtx: Location[], diags: Diagnostics): RuleItem {
  const { name, ctx, r } = named(r0, 'rule', itemCtx);
  const { append, overrides } = checkAppendOverride(r, ctx, diags);
  let override: Partial<Record<RuleKey, OverrideOp>> | undefined;
  if (overrides) {
    override = {};
    for (const [k, { op, loc }] of overrides) {
      const key = k as RuleKey;
      if (op === 'append' && !APPENDABLE.includes(key)) {
        throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Key '${k}' cannot be appended to, use 'replace' instead`, [...ctx, loc]);
      }
      if (op === 'replace' && !REPLACEABLE.includes(key)) {
        throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Key '${k}' cannot be replaced`, [...ctx, loc]);
      }
      if (!r.has(k)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', `An ${op} override for '${k}' was specified but '${k}' is not defined`, [...ctx, loc]);
      override[key] = op;
    }
    for (const k of REPLACEABLE) {
      if (r.has(k) && !(k in override)) {
        throw new ItemError('LOAD_ERR_YAML_VALIDATE', `Unexpected key '${k}': no corresponding entry under 'override' is defined.`, r.valueCtx(k));
      }
    }
  }
  const sub = (key: string, itemType: ItemType): Location[] => [...ctx, { ...r.valueCtx(key).at(-1)!, itemType, itemName: '' }];
  const item: RuleItem = {
    kind: 'rule',
    name,
    ctx,
    append,
    override,
    condition: r.located('condition', false),
    condCtx: sub('condition', 'rule condition'),
    output: r.located('output', false),
    outputCtx: sub('output', 'rule output'),
    desc: r.scalar('desc', false),
    priority: r.scalar('priority', false),
    priorityCtx: sub('priority', 'rule priority'),
    source: append || overrides ? optionalSource(r) : r.scalar('source', false),
    enabled: r.bool('enabled'),
    tags: r.strings('tags', false),
    warnEvttypes: r.bool('warn_evttypes'),
    skipIfUnknownFilter: r.bool('skip-if-unknown-filter'),
    capture: r.bool('capture'),
  };
  const dur = r.scalar('capture_duration', false);
  if (dur !== undefined) {
    if (!/^\d+$/.test(dur)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', "Can't decode YAML scalar value", r.valueCtx('capture_duration'));
    item.captureDuration = Number(dur);
  }
  if (r.has('exceptions')) item.exceptions = readExceptions(r, ctx);
  return item;
}

/** `source` of an appending or overriding item: Falco leaves it unread there, so an empty one is no error. */
function optionalSource(r: ItemReader): string | undefined {
  const v = r.keys.get('source')?.value as Node | null | undefined;
  if (v === undefined || v === null || (isScalar(v) && (v.value === null || v.value === ''))) return undefined;
  return r.scalar('source', false);
}

function readExceptions(r: ItemReader, ctx: Location[]): ExceptionItem[] {
  const exCtx = [...ctx, { ...r.valueCtx('exceptions').at(-1)!, itemType: 'exceptions' as const, itemName: '' }];
  const pair = r.keys.get('exceptions')!;
  const v = pair.value as Node | null;
  if (v === null || (isScalar(v) && v.value === null)) return [];
  if (!isSeq(v)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Rule exceptions must be a sequence', exCtx);
  const out: ExceptionItem[] = [];
  for (const e of v.items as Node[]) {
    const ectx = [...exCtx, at(r.src, 'exception', '', e.range?.[0] ?? 0)];
    if (!isMap(e)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Rule exception must be a mapping', ectx);
    const keys = new Map<string, Pair<unknown, unknown>>();
    for (const p of (e as YAMLMap<unknown, unknown>).items) keys.set(isScalar(p.key) ? String(p.key.value) : '', p);
    const er = new ItemReader(r.src, keys, ectx);
    const name = er.scalar('name', true, true)!;
    const named = ectx.slice(0, -1).concat({ ...ectx.at(-1)!, itemName: name });
    const ex: ExceptionItem = { name, ctx: named };
    const strOrList = (key: string): { list: boolean; items: string[] } | undefined => {
      const p = keys.get(key);
      if (!p) return undefined;
      if (isSeq(p.value)) return { list: true, items: er.strings(key, false)! };
      return { list: false, items: [er.scalar(key, false, true)!] };
    };
    ex.fields = strOrList('fields');
    ex.comps = strOrList('comps');
    const vp = keys.get('values');
    if (vp) {
      const vn = vp.value as Node | null;
      if (vn !== null && !(isScalar(vn) && vn.value === null)) {
        if (!isSeq(vn)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Value is not a sequence', er.valueCtx('values'));
        ex.values = (vn.items as Node[]).map((t) => readExceptionValue(er, t, named));
      } else ex.values = [];
    }
    out.push(ex);
  }
  return out;
}

function readExceptionValue(er: ItemReader, t: Node, ctx: Location[]): string | Array<string | string[]> {
  const vctx = [...ctx, at(er.src, 'exception value', '', t.range?.[0] ?? 0)];
  if (isScalar(t)) return er.scalarText(t);
  if (!isSeq(t)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Expected values array to contain a list of strings', vctx);
  return (t.items as Node[]).map((el) => {
    if (isScalar(el)) return er.scalarText(el);
    if (isSeq(el)) {
      return (el.items as Node[]).map((x) => {
        if (!isScalar(x)) throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Value is not a scalar value', vctx);
        return er.scalarText(x);
      });
    }
    throw new ItemError('LOAD_ERR_YAML_VALIDATE', 'Value is not a scalar value', vctx);
  });
}
