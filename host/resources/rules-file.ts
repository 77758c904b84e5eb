// An EngineAuditRules resource as a Falco rules file in memory (what the upstream rules-loader
// writes to rules.d, reference/module-and-forwarder.md §2 "CR -> Falco rule file"), plus the way
// back: every location the engine reports in the generated text is mapped to the manifest, so a
// bad condition in a manifest is reported at manifest:line:col with the manifest's snippet.
// A NamespacedEngineAuditRules of namespace N is scoped in the translation, so that it can act on
// its namespace only (docs/resources.md "Namespaced rules"):
//   - its rule R is the rule `N/R` with the condition `(<condition>) and k8s.ns.name = "N"`
//     (ka.target.namespace for K8sAudit rules): it sees only the events of its namespace's pods;
//   - its exception E to a rule of the cluster is appended to that rule (override exceptions:
//     append) as the exception `N/<resource>/E` whose first field is the namespace field, with N
//     first in every value row: it can only silence the rule in N. The name is its own, so its
//     values are never merged into an exception of the rule's owner.
// Consumes an EngineAuditRulesResource or NamespacedEngineAuditRulesResource; produces a
// RulesFile and a location mapper.
import { type Diagnostic, type Location, MappedText, type RulesFile, type SourceText } from '../engine/index.js';
import type { ExceptionSpecItem, RulesResource, RulesSpecItem, Spanned } from './manifests.js';

/** A generated rules file and its way back to the manifest. */
export interface TranslatedRules {
  resource: RulesResource;
  file: RulesFile;
  /** The same location in the manifest (locations in other files are returned unchanged). */
  remap(loc: Location): Location;
}

/** A run of generated text and where it came from. */
interface Segment {
  gStart: number;
  gEnd: number;
  /** Manifest offset of the segment start. */
  mStart: number;
  /** For quoted scalars: generated offset of each value character, and the value mapped onto the manifest. */
  charAt?: number[];
  value?: MappedText;
}

/** Builds the text and its segments. */
class Emitter {
  private text = '';
  readonly segments: Segment[] = [];
  constructor(private readonly src: SourceText) {}

  raw(s: string): this {
    this.text += s;
    return this;
  }

  /** A point whose generated offset maps to a manifest offset (item starts, the file start). */
  anchor(mOffset: number): this {
    this.segments.push({ gStart: this.text.length, gEnd: this.text.length, mStart: mOffset });
    return this;
  }

  /**
   * A value as a JSON string (a valid YAML double-quoted scalar), mapped character by character;
   * `prefix` and `suffix` are generated text around it inside the string (mapped to its ends).
   */
  scalar(v: Spanned, prefix = '', suffix = ''): this {
    const gStart = this.text.length;
    const charAt: number[] = [];
    let out = `"${JSON.stringify(prefix).slice(1, -1)}`;
    for (const cp of v.text) {
      const enc = JSON.stringify(cp).slice(1, -1);
      for (let k = 0; k < cp.length; k++) charAt.push(gStart + out.length);
      out += enc;
    }
    out += `${JSON.stringify(suffix).slice(1, -1)}"`;
    this.text += out;
    const value = MappedText.fromScalar(v.text, this.src, v.start, v.end);
    this.segments.push({ gStart, gEnd: this.text.length, mStart: v.start, charAt, value });
    return this;
  }

  get result(): string {
    return this.text;
  }
}

/** The field that says an event's namespace, per source. */
const NAMESPACE_FIELD = { syscall: 'k8s.ns.name', k8s_audit: 'ka.target.namespace' } as const;

/** A rule item, or its namespaced form (its name and condition scoped to `ns`). */
function emitRule(e: Emitter, item: Extract<RulesSpecItem, { kind: 'rule' }>, ns?: string): void {
  e.raw('rule: ').scalar(item.name, ns ? `${ns}/` : '');
  e.raw('\n  desc: ').scalar(item.desc);
  e.raw('\n  condition: ');
  if (ns) e.scalar(item.condition, '(', `) and ${NAMESPACE_FIELD[item.source]} = "${ns}"`);
  else e.scalar(item.condition);
  e.raw('\n  output: ').scalar(item.output);
  e.raw('\n  priority: ').scalar(item.priority);
  e.raw(`\n  source: ${item.source}`);
  if (item.enabled !== undefined) e.raw(`\n  enabled: ${item.enabled}`);
  if (item.tags) {
    e.raw('\n  tags: [');
    item.tags.forEach((t, i) => (i > 0 ? e.raw(', ') : e).scalar(t));
    e.raw(']');
  }
  e.raw('\n');
}

/** An exception of namespace `ns` (resource `resource`) appended to a rule of the cluster. */
function emitException(e: Emitter, item: ExceptionSpecItem, ns: string, resource: string): void {
  const list = (xs: Spanned[], first: string) => {
    e.raw(`[${JSON.stringify(first)}`);
    for (const x of xs) e.raw(', ').scalar(x);
    e.raw(']');
  };
  e.raw('rule: ').scalar(item.rule);
  e.raw('\n  exceptions:\n    - name: ').scalar(item.name, `${ns}/${resource}/`);
  e.raw('\n      fields: ');
  list(item.fields, NAMESPACE_FIELD[item.source]);
  if (item.comps) {
    e.raw('\n      comps: ');
    list(item.comps, '=');
  }
  e.raw('\n      values: [');
  item.values.forEach((row, i) => {
    if (i > 0) e.raw(', ');
    list(row, ns);
  });
  e.raw(']\n  override:\n    exceptions: append\n');
}

function emitItem(e: Emitter, item: RulesSpecItem): void {
  e.raw('- ').anchor(item.node.start);
  switch (item.kind) {
    case 'list':
      e.raw('list: ').scalar(item.name).raw('\n  items: [');
      item.items.forEach((it, i) => (i > 0 ? e.raw(', ') : e).scalar(it));
      e.raw(']\n');
      return;
    case 'macro':
      e.raw('macro: ').scalar(item.name).raw('\n  condition: ').scalar(item.condition).raw('\n');
      return;
    case 'rule':
      emitRule(e, item);
  }
}

/** The generated file's name: unique per resource, never a real path. */
function generatedName(r: RulesResource): string {
  return `${r.file}#${r.kind}/${r.name}`;
}

/** Translates a resource into a rules file. */
export function toRulesFile(resource: RulesResource): TranslatedRules {
  const e = new Emitter(resource.src);
  const docStart = resource.ctx[0]!.position.offset;
  e.anchor(docStart);
  if (resource.kind === 'NamespacedEngineAuditRules') {
    const [ns, name] = resource.name.split('/') as [string, string];
    for (const item of resource.items) {
      e.raw('- ').anchor(item.node.start);
      if (item.kind === 'rule') emitRule(e, item, ns);
      else emitException(e, item, ns, name);
    }
  } else {
    if (resource.requiredEngineVersion !== undefined) {
      e.raw('- ')
        .anchor(resource.requiredEngineVersionAt ?? docStart)
        .raw(`required_engine_version: ${resource.requiredEngineVersion}\n`);
    }
    for (const item of resource.items) emitItem(e, item);
  }
  const name = generatedName(resource);
  const segments = e.segments;

  function manifestOffset(g: number): number {
    let lo = 0;
    let hi = segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segments[mid]!.gStart <= g) lo = mid;
      else hi = mid - 1;
    }
    const s = segments[lo]!;
    if (!s.charAt || !s.value || g >= s.gEnd || g <= s.gStart) return s.mStart;
    let i = 0;
    while (i + 1 < s.charAt.length && s.charAt[i + 1]! <= g) i++;
    if (g >= s.gEnd - 1) i = s.charAt.length; // the closing quote: one past the last character
    return s.value.origin(i).offset;
  }

  return {
    resource,
    file: { name, text: e.result },
    remap(loc) {
      if (loc.position.name !== name) return loc;
      if (loc.itemType === 'rules content' && loc.position.offset === 0) return resource.ctx[0]!;
      return { ...loc, position: resource.src.position(manifestOffset(loc.position.offset)) };
    },
  };
}

/** Diagnostics with every generated location mapped into its manifest. */
export function remapDiagnostics(ds: readonly Diagnostic[], translations: readonly TranslatedRules[]): Diagnostic[] {
  const byName = new Map(translations.map((t) => [t.file.name, t]));
  return ds.map((d) => ({ ...d, locations: d.locations.map((l) => byName.get(l.position.name)?.remap(l) ?? l) }));
}

/** The translations a diagnostic points into (before remapping). */
export function owners(d: Diagnostic, translations: readonly TranslatedRules[]): TranslatedRules[] {
  return translations.filter((t) => d.locations.some((l) => l.position.name === t.file.name));
}
