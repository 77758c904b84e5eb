// Module resources from manifest files: multi-document YAML, each document one resource of
// apiVersion `<group>/v1alpha1` (reference/module-and-forwarder.md §1-2):
//   ModuleConfig `runtime-audit-engine`   spec.enabled, spec.version, spec.settings.{debugLogging, builtInRulesList}
//   EngineAuditRules <name>                spec.rules: items of exactly one of macro | list | rule
//   NamespacedEngineAuditRules <ns>/<name>  spec.rules: items of exactly one of rule | exception, scoped
//                                          to the namespace when translated (rules-file.ts)
// Consumes a file name and its text; produces typed resources and located diagnostics (rendered
// like rule diagnostics by renderDiagnostic). A document with any error yields no resource; the
// other documents of the file are unaffected.
import { isMap, isScalar, isSeq, parseAllDocuments, type Node, type YAMLMap } from 'yaml';
import { BUILTIN_SETS, type Diagnostic, diagnostic, type Location, SourceText } from '../engine/index.js';
import { PRIORITIES } from '../engine/priority.js';
import { mapPairs, validateNode, valueLocation, type Schema } from './schema.js';

/** The module's name: the only valid ModuleConfig name. */
export const MODULE_NAME = 'runtime-audit-engine';
/** The resource version of every kind. */
export const RESOURCE_VERSION = 'v1alpha1';
/** The kinds this module reads. */
export const KINDS = ['ModuleConfig', 'EngineAuditRules', 'NamespacedEngineAuditRules'] as const;

/** Orchestrator object names: a DNS-1123 subdomain. */
export const RESOURCE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME: Schema = { type: 'string', maxLength: 253, pattern: { re: RESOURCE_NAME, text: 'a lower-case DNS-1123 name (a-z, 0-9, "-" and ".", starting and ending with a letter or digit)' } };

/** Namespace names: a DNS-1123 label. */
const NAMESPACE: Schema = { type: 'string', maxLength: 63, pattern: { re: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, text: 'a DNS-1123 label (a-z, 0-9 and "-", starting and ending with a letter or digit)' } };

const METADATA: Schema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: NAME,
    labels: { type: 'object', properties: {}, additional: { type: 'string' } },
    annotations: { type: 'object', properties: {}, additional: { type: 'string' } },
  },
};

/** The metadata of a namespaced kind: the namespace is required. */
const NAMESPACED_METADATA: Schema = {
  type: 'object',
  required: ['name', 'namespace'],
  properties: {
    name: NAME,
    namespace: NAMESPACE,
    labels: { type: 'object', properties: {}, additional: { type: 'string' } },
    annotations: { type: 'object', properties: {}, additional: { type: 'string' } },
  },
};

const STRINGS: Schema = { type: 'array', items: { type: 'string' } };

/** A rule item (the FalcoAuditRules CRD schema, reference §2). */
const RULE: Schema = {
  type: 'object',
  label: 'rule',
  required: ['name', 'condition', 'desc', 'output', 'priority'],
  properties: {
    name: { type: 'string' },
    desc: { type: 'string' },
    condition: { type: 'string' },
    output: { type: 'string' },
    priority: { type: 'string', enum: PRIORITIES },
    tags: STRINGS,
    enabled: { type: 'boolean' },
    source: { type: 'string', enum: ['Syscall', 'K8sAudit'] },
  },
};

/** The NamespacedEngineAuditRules spec: new rules, and exceptions added to a rule of the cluster. */
const NAMESPACED_RULES_SPEC: Schema = {
  type: 'object',
  required: ['rules'],
  properties: {
    rules: {
      type: 'array',
      items: {
        type: 'object',
        exactlyOne: ['rule', 'exception'],
        properties: {
          rule: RULE,
          exception: {
            type: 'object',
            label: 'exception',
            required: ['rule', 'name', 'fields', 'values'],
            properties: {
              rule: { type: 'string' },
              name: { type: 'string' },
              source: { type: 'string', enum: ['Syscall', 'K8sAudit'] },
              fields: STRINGS,
              comps: STRINGS,
              values: { type: 'array', items: { type: 'array', items: { type: 'int-or-string' } } },
            },
          },
        },
      },
    },
  },
};

/** The EngineAuditRules spec (the FalcoAuditRules CRD schema, reference §2). */
const RULES_SPEC: Schema = {
  type: 'object',
  required: ['rules'],
  properties: {
    requiredEngineVersion: { type: 'integer' },
    requiredK8sAuditPluginVersion: { type: 'string' },
    rules: {
      type: 'array',
      items: {
        type: 'object',
        exactlyOne: ['macro', 'list', 'rule'],
        properties: {
          rule: RULE,
          macro: { type: 'object', label: 'macro', required: ['name', 'condition'], properties: { name: { type: 'string' }, condition: { type: 'string' } } },
          list: { type: 'object', label: 'list', required: ['name', 'items'], properties: { name: { type: 'string' }, items: { type: 'array', items: { type: 'int-or-string' } } } },
        },
      },
    },
  },
};

/** The ModuleConfig spec (Deckhouse ModuleConfig, settings of reference §1 with our rule sets). */
const MODULE_SPEC: Schema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    version: { type: 'integer', enum: [1] },
    settings: {
      type: 'object',
      properties: {
        debugLogging: { type: 'boolean' },
        builtInRulesList: { type: 'array', items: { type: 'string', enum: BUILTIN_SETS } },
      },
    },
  },
};

function resourceSchema(spec: Schema, metadata = METADATA): Schema {
  return {
    type: 'object',
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata, spec },
  };
}

/** Each kind's schema. */
const SCHEMAS: Record<(typeof KINDS)[number], Schema> = {
  ModuleConfig: resourceSchema(MODULE_SPEC),
  EngineAuditRules: resourceSchema(RULES_SPEC),
  NamespacedEngineAuditRules: resourceSchema(NAMESPACED_RULES_SPEC, NAMESPACED_METADATA),
};

/** A string from the manifest with the raw range of its node (for locating errors in it). */
export interface Spanned {
  text: string;
  start: number;
  end: number;
}

/** One item of spec.rules, with the ranges the rules-file translation maps back to. */
export type RulesSpecItem =
  | { kind: 'list'; node: Spanned; name: Spanned; items: Spanned[] }
  | { kind: 'macro'; node: Spanned; name: Spanned; condition: Spanned }
  | {
      kind: 'rule';
      node: Spanned;
      name: Spanned;
      desc: Spanned;
      condition: Spanned;
      output: Spanned;
      priority: Spanned;
      source: 'syscall' | 'k8s_audit';
      enabled?: boolean;
      tags?: Spanned[];
    };

/** An exception a NamespacedEngineAuditRules adds to a rule (values: one row per list of the manifest). */
export interface ExceptionSpecItem {
  kind: 'exception';
  node: Spanned;
  rule: Spanned;
  name: Spanned;
  source: 'syscall' | 'k8s_audit';
  fields: Spanned[];
  comps?: Spanned[];
  values: Spanned[][];
}

interface ResourceBase {
  name: string;
  /** The manifest file and the document's start. */
  file: string;
  doc: number;
  /** `rules content 'Kind/name'` at the document start: the root of every diagnostic chain. */
  ctx: Location[];
  src: SourceText;
}

export interface ModuleConfigResource extends ResourceBase {
  kind: 'ModuleConfig';
  enabled: boolean;
  debugLogging: boolean;
  /** Absent when the setting is not given (the configured default applies). */
  builtInRulesList?: string[];
}

export interface EngineAuditRulesResource extends ResourceBase {
  kind: 'EngineAuditRules';
  requiredEngineVersion?: number;
  /** Offset of the requiredEngineVersion value (where its errors point). */
  requiredEngineVersionAt?: number;
  requiredK8sAuditPluginVersion?: string;
  items: RulesSpecItem[];
}

/** Rules of one namespace: `name` is `<namespace>/<metadata.name>`. */
export interface NamespacedEngineAuditRulesResource extends ResourceBase {
  kind: 'NamespacedEngineAuditRules';
  namespace: string;
  items: Array<Extract<RulesSpecItem, { kind: 'rule' }> | ExceptionSpecItem>;
}

/** The kinds that are turned into rules files. */
export type RulesResource = EngineAuditRulesResource | NamespacedEngineAuditRulesResource;

export type Resource = ModuleConfigResource | RulesResource;

/** What one manifest file holds. */
export interface ManifestRead {
  src: SourceText;
  resources: Resource[];
  /** Every problem, located; a document with an error produced no resource. */
  diagnostics: Diagnostic[];
  /** Every rejected document with its errors; kind and name are '' when they could not be read. */
  rejected: RejectedDocument[];
}

/** A document that produced no resource. */
interface RejectedDocument {
  kind: string;
  name: string;
  ctx: Location[];
  errors: Diagnostic[];
}

/** Reads every document of a manifest file; `apiGroup` is the group of the expected apiVersion. */
export function readManifests(name: string, text: string, apiGroup: string): ManifestRead {
  const src = new SourceText(name, text);
  const out: ManifestRead = { src, resources: [], diagnostics: [], rejected: [] };
  const top = (offset: number, itemName = ''): Location => ({ itemType: 'rules content', itemName, position: src.position(offset) });
  const docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, index) => {
    const start = doc.contents?.range?.[0] ?? doc.range[0];
    if (doc.errors.length > 0) {
      const errors = doc.errors.map((err) => diagnostic('LOAD_ERR_YAML_PARSE', err.message.split('\n')[0]!, [top(start), top(err.pos[0])]));
      out.diagnostics.push(...errors);
      out.rejected.push({ kind: '', name: '', ctx: [top(start)], errors });
      return;
    }
    const root = doc.contents as Node | null;
    if (root === null || (isScalar(root) && root.value === null)) return; // an empty document (e.g. after a trailing ---)
    const ident = identity(root);
    const ctx = [top(start, ident.kind && ident.name ? `${ident.kind}/${ident.name}` : '')];
    const diags = checkDocument(root, src, ctx, apiGroup);
    if (diags.length > 0) {
      out.diagnostics.push(...diags);
      out.rejected.push({ kind: ident.kind ?? '', name: ident.name ?? '', ctx, errors: diags });
      return;
    }
    const base = { name: ident.name!, file: name, doc: index, ctx, src };
    const map = root as YAMLMap<unknown, unknown>;
    out.resources.push(ident.kind === 'ModuleConfig' ? moduleConfig(map, base) : ident.kind === 'NamespacedEngineAuditRules' ? namespacedRules(map, base, src) : auditRules(map, base, src));
  });
  return out;
}

/** Kind and name of a document; a namespaced kind's name is `<namespace>/<name>` (unique across namespaces). */
function identity(root: Node): { kind?: string; name?: string } {
  if (!isMap(root)) return {};
  const pairs = mapPairs(root as YAMLMap<unknown, unknown>);
  const str = (n: unknown) => (isScalar(n) && typeof n.value === 'string' ? n.value : undefined);
  const meta = pairs.get('metadata')?.value;
  const kind = str(pairs.get('kind')?.value);
  const metaPairs = isMap(meta) ? mapPairs(meta as YAMLMap<unknown, unknown>) : undefined;
  const name = str(metaPairs?.get('name')?.value);
  const namespace = str(metaPairs?.get('namespace')?.value);
  return { kind, name: kind === 'NamespacedEngineAuditRules' && name && namespace ? `${namespace}/${name}` : name };
}

/** apiVersion, kind and name first (they decide the schema), then the kind's schema. */
function checkDocument(root: Node, src: SourceText, ctx: Location[], apiGroup: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const fail = (message: string, path: string, node: Node | null | undefined) => {
    out.push(diagnostic('LOAD_ERR_YAML_VALIDATE', message, path ? [...ctx, valueLocation(src, path, node, root.range?.[0])] : ctx));
  };
  if (!isMap(root)) {
    fail(`a resource must be a mapping with apiVersion, kind, metadata and spec`, '', root);
    return out;
  }
  const pairs = mapPairs(root as YAMLMap<unknown, unknown>);
  const kindNode = pairs.get('kind')?.value as Node | undefined;
  const kind = isScalar(kindNode) ? String(kindNode.value) : undefined;
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind)) {
    fail(`kind ${JSON.stringify(kind)} is not a resource of this module (known kinds: ${KINDS.join(', ')})`, 'kind', kindNode);
    return out;
  }
  const apiNode = pairs.get('apiVersion')?.value as Node | undefined;
  const want = `${apiGroup}/${RESOURCE_VERSION}`;
  if (isScalar(apiNode) && apiNode.value !== want) fail(`apiVersion must be ${JSON.stringify(want)}, not ${JSON.stringify(apiNode.value)}`, 'apiVersion', apiNode);
  validateNode(root, SCHEMAS[(kind as (typeof KINDS)[number] | undefined) ?? 'EngineAuditRules'] ?? SCHEMAS.EngineAuditRules, '', { src, ctx }, out);
  const meta = pairs.get('metadata')?.value;
  const nameNode = isMap(meta) ? (mapPairs(meta as YAMLMap<unknown, unknown>).get('name')?.value as Node | undefined) : undefined;
  if (kind === 'ModuleConfig' && isScalar(nameNode) && nameNode.value !== MODULE_NAME) {
    fail(`a ModuleConfig of this module must be named ${JSON.stringify(MODULE_NAME)}, not ${JSON.stringify(nameNode.value)}`, 'metadata.name', nameNode);
  }
  return out;
}

/** The node at a key path of validated mappings (undefined when absent). */
function at(map: YAMLMap<unknown, unknown>, ...keys: string[]): Node | undefined {
  let cur: Node | undefined = map;
  for (const k of keys) {
    if (!isMap(cur)) return undefined;
    cur = mapPairs(cur as YAMLMap<unknown, unknown>).get(k)?.value as Node | undefined;
  }
  return cur ?? undefined;
}

function moduleConfig(root: YAMLMap<unknown, unknown>, base: Omit<ResourceBase, never>): ModuleConfigResource {
  const bool = (n: Node | undefined) => isScalar(n) && n.value === true;
  const list = at(root, 'spec', 'settings', 'builtInRulesList');
  return {
    ...base,
    kind: 'ModuleConfig',
    enabled: bool(at(root, 'spec', 'enabled')),
    debugLogging: bool(at(root, 'spec', 'settings', 'debugLogging')),
    builtInRulesList: isSeq(list) ? (list.items as Node[]).map((n) => String((n as { value: unknown }).value)) : undefined,
  };
}

/** A scalar's text as written for non-strings (list items keep `0700`, not 448), with its range. */
function spanned(src: SourceText, n: Node | undefined): Spanned {
  const [start, end] = n?.range ?? [0, 0];
  const v = isScalar(n) ? n.value : undefined;
  return { text: typeof v === 'string' ? v : src.text.slice(start, end).trim(), start, end };
}

/** A rule item's fields (validated). */
function ruleItem(src: SourceText, body: YAMLMap<unknown, unknown>): Extract<RulesSpecItem, { kind: 'rule' }> {
  const s = (key: string) => spanned(src, at(body, key));
  const enabled = at(body, 'enabled');
  const tags = at(body, 'tags');
  return {
    kind: 'rule',
    node: spanned(src, body),
    name: s('name'),
    desc: s('desc'),
    condition: s('condition'),
    output: s('output'),
    priority: s('priority'),
    source: sourceOf(at(body, 'source')),
    enabled: isScalar(enabled) ? enabled.value === true : undefined,
    tags: isSeq(tags) ? (tags.items as Node[]).map((n) => spanned(src, n)) : undefined,
  };
}

function sourceOf(n: Node | undefined): 'syscall' | 'k8s_audit' {
  return isScalar(n) && n.value === 'K8sAudit' ? 'k8s_audit' : 'syscall';
}

function namespacedRules(root: YAMLMap<unknown, unknown>, base: ResourceBase, src: SourceText): NamespacedEngineAuditRulesResource {
  const items: NamespacedEngineAuditRulesResource['items'] = [];
  const rules = at(root, 'spec', 'rules');
  const seq = (n: Node | undefined) => (isSeq(n) ? (n.items as Node[]) : []);
  for (const item of seq(rules) as Array<YAMLMap<unknown, unknown>>) {
    const rule = at(item, 'rule');
    if (rule) {
      items.push(ruleItem(src, rule as YAMLMap<unknown, unknown>));
      continue;
    }
    const body = at(item, 'exception') as YAMLMap<unknown, unknown>;
    const comps = at(body, 'comps');
    items.push({
      kind: 'exception',
      node: spanned(src, body),
      rule: spanned(src, at(body, 'rule')),
      name: spanned(src, at(body, 'name')),
      source: sourceOf(at(body, 'source')),
      fields: seq(at(body, 'fields')).map((n) => spanned(src, n)),
      comps: isSeq(comps) ? seq(comps).map((n) => spanned(src, n)) : undefined,
      values: seq(at(body, 'values')).map((row) => seq(row).map((n) => spanned(src, n))),
    });
  }
  return { ...base, kind: 'NamespacedEngineAuditRules', namespace: base.name.split('/')[0]!, items };
}

function auditRules(root: YAMLMap<unknown, unknown>, base: ResourceBase, src: SourceText): EngineAuditRulesResource {
  const items: RulesSpecItem[] = [];
  const rules = at(root, 'spec', 'rules');
  for (const item of isSeq(rules) ? (rules.items as Array<YAMLMap<unknown, unknown>>) : []) {
    const kind = (['rule', 'macro', 'list'] as const).find((k) => at(item, k) !== undefined)!;
    const body = at(item, kind) as YAMLMap<unknown, unknown>;
    const s = (key: string) => spanned(src, at(body, key));
    const node = spanned(src, body);
    if (kind === 'list') {
      const seq = at(body, 'items');
      items.push({ kind, node, name: s('name'), items: isSeq(seq) ? (seq.items as Node[]).map((n) => spanned(src, n)) : [] });
    } else if (kind === 'macro') {
      items.push({ kind, node, name: s('name'), condition: s('condition') });
    } else {
      items.push(ruleItem(src, body));
    }
  }
  const rev = at(root, 'spec', 'requiredEngineVersion');
  const plugin = at(root, 'spec', 'requiredK8sAuditPluginVersion');
  return {
    ...base,
    kind: 'EngineAuditRules',
    requiredEngineVersion: isScalar(rev) ? Number(rev.value) : undefined,
    requiredEngineVersionAt: rev?.range?.[0],
    requiredK8sAuditPluginVersion: isScalar(plugin) ? String(plugin.value) : undefined,
    items,
  };
}
