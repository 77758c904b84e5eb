// The converter: a Falco rules file (a flat list of macro, list and rule items) to one
// EngineAuditRules manifest (reference/module-and-forwarder.md §3). Read by the engine's own
// reader, so every structural problem is a located diagnostic. Unlike the upstream far-converter
// it writes `apiVersion` with 2-space indentation, maps `INFO` and `INFORMATIONAL` to
// `Informational`, keeps `enabled: false`, skips `required_engine_version` and
// `required_plugin_versions` with a note instead of crashing, and refuses (never drops) what the
// resource cannot express: append/override items, exceptions, partial rules, other sources.
// Consumes a file name and text; produces the manifest text or located errors.
import { Document, isScalar, isSeq, visit, type ToStringOptions } from 'yaml';
import { type Diagnostic, diagnostic, Diagnostics, type Location, readRulesFile, type RulesItem, SourceText } from '../engine/index.js';
import { parsePriority } from '../engine/priority.js';
import { RESOURCE_NAME, RESOURCE_VERSION } from './manifests.js';

/** A located remark that does not stop the conversion. */
interface Note {
  message: string;
  location: Location;
}

export interface ConvertResult {
  ok: boolean;
  /** The manifest (when ok). */
  manifest?: string;
  /** Errors (conversion refused) and warnings, located in the input. */
  diagnostics: Diagnostic[];
  notes: Note[];
  src: SourceText;
}

export interface ConvertOptions {
  apiGroup: string;
  /** metadata.name; derived from the file name when absent. */
  resourceName?: string;
}

/** The resource name of a rules file: its base name up to the first dot, made a DNS-1123 name. */
export function resourceNameFromPath(path: string): string | undefined {
  const base = path.split(/[\\/]/).pop() ?? '';
  const stem = base.split('.')[0] ?? '';
  const name = stem
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 253)
    .replace(/-$/, '');
  return RESOURCE_NAME.test(name) ? name : undefined;
}

const SOURCES: Record<string, string> = { syscall: 'Syscall', k8s_audit: 'K8sAudit' };
const INT = /^-?(0|[1-9][0-9]*)$/;

/** One rules item as a spec.rules entry, or the reason it cannot be one. */
function convertItem(item: RulesItem, fail: (message: string, ctx: Location[]) => undefined, note: (message: string, ctx: Location[]) => void): object | undefined {
  const how = (op: string) => `an EngineAuditRules resource only defines complete items; merge the ${op} into the item it changes`;
  switch (item.kind) {
    case 'required_engine_version':
    case 'required_plugin_versions':
      note(`${item.kind} skipped: EngineAuditRules has no such field`, item.ctx);
      return undefined;
    case 'list':
      if (item.append || item.override) return fail(`list '${item.name}' uses append/override: ${how('list')}`, item.ctx);
      return { list: { name: item.name, items: item.items.map((s) => (INT.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : s)) } };
    case 'macro':
      if (item.append || item.override) return fail(`macro '${item.name}' uses append/override: ${how('macro')}`, item.ctx);
      return { macro: { name: item.name, condition: item.condition.text } };
    case 'rule': {
      if (item.append || item.override) return fail(`rule '${item.name}' uses append/override: ${how('rule')}`, item.ctx);
      const missing = (['condition', 'desc', 'output', 'priority'] as const).filter((k) => item[k] === undefined);
      if (missing.length > 0) {
        return fail(`rule '${item.name}' has no ${missing.join(', ')}: an item that only changes an existing rule (such as enabled: false) cannot be an EngineAuditRules rule`, item.ctx);
      }
      if (item.exceptions && item.exceptions.length > 0) return fail(`rule '${item.name}' has exceptions, which EngineAuditRules cannot express; fold them into the condition`, item.ctx);
      const extra = (['warnEvttypes', 'skipIfUnknownFilter', 'capture', 'captureDuration'] as const).filter((k) => item[k] !== undefined);
      if (extra.length > 0) {
        const keys = extra.map((k) => ({ warnEvttypes: 'warn_evttypes', skipIfUnknownFilter: 'skip-if-unknown-filter', capture: 'capture', captureDuration: 'capture_duration' })[k]);
        return fail(`rule '${item.name}' uses ${keys.join(', ')}, which EngineAuditRules has no field for`, item.ctx);
      }
      const priority = parsePriority(item.priority!);
      if (!priority) return fail(`rule '${item.name}' has an invalid priority '${item.priority}'`, item.priorityCtx);
      const source = item.source === undefined ? undefined : SOURCES[item.source];
      if (item.source !== undefined && !source) {
        return fail(`rule '${item.name}' has source '${item.source}'; EngineAuditRules rules are syscall (Syscall) or k8s_audit (K8sAudit)`, item.ctx);
      }
      if (item.exceptions) note(`rule '${item.name}': empty exceptions skipped`, item.ctx);
      const rule: Record<string, unknown> = { name: item.name, condition: item.condition!.text, desc: item.desc, output: item.output!.text, priority };
      if (item.enabled !== undefined) rule.enabled = item.enabled;
      if (item.tags !== undefined) rule.tags = item.tags;
      if (source) rule.source = source;
      return { rule };
    }
  }
}

const FORMAT: ToStringOptions = { indent: 2, indentSeq: true, lineWidth: 100, minContentWidth: 40, flowCollectionPadding: false };

/** Converts one Falco rules file. */
export function convertRulesFile(name: string, text: string, opts: ConvertOptions): ConvertResult {
  const src = new SourceText(name, text);
  const diags = new Diagnostics();
  const notes: Note[] = [];
  const items = readRulesFile(src, diags);
  const rules: object[] = [];
  const fail = (message: string, ctx: Location[]): undefined => {
    diags.push(diagnostic('LOAD_ERR_VALIDATE', message, ctx));
    return undefined;
  };
  const note = (message: string, ctx: Location[]) => notes.push({ message, location: ctx.at(-1)! });
  for (const item of items) {
    const out = convertItem(item, fail, note);
    if (out) rules.push(out);
  }
  const resourceName = opts.resourceName ?? resourceNameFromPath(name);
  if (!resourceName || !RESOURCE_NAME.test(resourceName)) {
    const why = opts.resourceName ? `'${opts.resourceName}' is not` : `cannot derive one from the file name '${name}', which gives no`;
    fail(`resource name: ${why} a lower-case DNS-1123 name; give one with --name`, [{ itemType: 'rules content', itemName: '', position: src.position(0) }]);
  }
  const result: ConvertResult = { ok: !diags.hasErrors(), diagnostics: diags.items, notes, src };
  if (!result.ok) return result;
  const doc = new Document({ apiVersion: `${opts.apiGroup}/${RESOURCE_VERSION}`, kind: 'EngineAuditRules', metadata: { name: resourceName }, spec: { rules } });
  // List items and tags read best on one line (`items: [ash, bash]`), as Falco files write them.
  visit(doc, {
    Pair(_, pair) {
      const k = isScalar(pair.key) ? pair.key.value : undefined;
      if ((k === 'items' || k === 'tags') && isSeq(pair.value)) pair.value.flow = true;
    },
  });
  result.manifest = doc.toString(FORMAT);
  return result;
}
