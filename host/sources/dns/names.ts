// The domain names a ruleset compares endpoint names with: the values of `fd.sip.name`,
// `fd.cip.name`, `fd.lip.name` and `fd.rip.name` under `=`, `!=` and `in`, the comparisons
// libsinsp hands to its DNS manager (sinsp_filtercheck_fd.cpp compare_domain: match(name, addr)
// puts each such name in the cache that a refresh thread keeps resolving). Consumes the loaded
// rules' checked conditions; produces the sorted names for the resolver (resolver.ts).
import { type LoadedRule, walkChecked } from '../../engine/index.js';

/** The endpoint-name fields (libsinsp TYPE_CLIENTIP_NAME, TYPE_SERVERIP_NAME, TYPE_LIP_NAME, TYPE_RIP_NAME). */
const NAME_FIELDS: ReadonlySet<string> = new Set(['fd.cip.name', 'fd.sip.name', 'fd.lip.name', 'fd.rip.name']);

/** The operators whose values libsinsp resolves (compare_domain: CO_EQ, CO_NE, CO_IN). */
const RESOLVED_OPS: ReadonlySet<string> = new Set(['=', '!=', 'in']);

/** Every domain name the syscall rules compare an endpoint name with, sorted, each once. */
export function domainNames(rules: readonly LoadedRule[]): string[] {
  const names = new Set<string>();
  for (const r of rules) {
    if (r.source !== 'syscall') continue;
    walkChecked(r.condition, (n) => {
      if (n.kind !== 'cmp' || n.left.kind !== 'field' || !NAME_FIELDS.has(n.left.def.name) || !RESOLVED_OPS.has(n.op)) return;
      for (const v of n.values) if (v.text !== '') names.add(v.text);
    });
  }
  return [...names].sort();
}
