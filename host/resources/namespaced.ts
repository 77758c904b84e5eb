// The guard that keeps a NamespacedEngineAuditRules inside its namespace where the translation
// alone cannot: its rules are named `<namespace>/<name>` (rules-file.ts), and a rule with the name
// of an existing one would replace it for every namespace. So a namespaced rule whose name is
// already defined by the built-in sets, the configured files, an EngineAuditRules or an earlier
// namespaced resource is refused (located at its name), and the rule it would have replaced stays.
// Consumes the base rules files and the candidate resources; produces the refusals.
import { parse } from 'yaml';
import { type Diagnostic, diagnostic, type RulesFile } from '../engine/index.js';
import type { NamespacedEngineAuditRulesResource, RulesResource } from './manifests.js';

/** Rule names defined by a rules file, by its text (built-in files are the same strings every time). */
const namesByText = new Map<string, Set<string>>();

function ruleNames(f: RulesFile): Set<string> {
  let names = namesByText.get(f.text);
  if (!names) {
    names = new Set<string>();
    try {
      const doc = parse(f.text) as unknown;
      for (const item of Array.isArray(doc) ? doc : []) if (item && typeof item === 'object' && typeof (item as { rule?: unknown }).rule === 'string') names.add((item as { rule: string }).rule);
    } catch {
      // a file that is not YAML is reported by the load itself
    }
    if (namesByText.size >= 32) namesByText.clear();
    namesByText.set(f.text, names);
  }
  return names;
}

/** The namespaced resources whose rules would replace a rule defined elsewhere, with why. */
export function namespacedConflicts(base: readonly RulesFile[], candidates: readonly RulesResource[]): Map<NamespacedEngineAuditRulesResource, Diagnostic[]> {
  const defined = new Set<string>();
  for (const f of base) for (const n of ruleNames(f)) defined.add(n);
  for (const r of candidates) if (r.kind === 'EngineAuditRules') for (const it of r.items) if (it.kind === 'rule') defined.add(it.name.text);
  const out = new Map<NamespacedEngineAuditRulesResource, Diagnostic[]>();
  for (const r of candidates) {
    if (r.kind !== 'NamespacedEngineAuditRules') continue;
    const ds: Diagnostic[] = [];
    const own: string[] = [];
    for (const it of r.items) {
      if (it.kind !== 'rule') continue;
      const qualified = `${r.namespace}/${it.name.text}`;
      if (defined.has(qualified)) {
        const at = [...r.ctx, { itemType: 'rule' as const, itemName: it.name.text, position: r.src.position(it.name.start) }];
        ds.push(diagnostic('LOAD_ERR_VALIDATE', `rule '${qualified}' is already defined elsewhere; a namespaced rule may not replace another rule`, at));
      }
      own.push(qualified);
    }
    if (ds.length > 0) out.set(r, ds);
    else for (const n of own) defined.add(n);
  }
  return out;
}
