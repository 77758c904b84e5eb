// The complete field table of each source, composed from the per-provider tables, with a
// by-name index. A `syscall` rule sees libsinsp's and the container plugin's fields; a
// `k8s_audit` rule sees libsinsp's generic event fields, the k8saudit and the json plugin's.
import { CONTAINER_FIELDS } from './container.js';
import { genericEventFields, SYSCALL_EVENT_FIELDS } from './event.js';
import { JSON_FIELDS, K8SAUDIT_FIELDS } from './k8saudit.js';
import { FD_FIELDS } from './syscall-fd.js';
import { PROCESS_FIELDS, USER_GROUP_FIELDS } from './syscall-process.js';
import type { FieldDef, Source } from './types.js';

const TABLES: Readonly<Record<Source, readonly FieldDef[]>> = {
  syscall: [...genericEventFields('syscall'), ...SYSCALL_EVENT_FIELDS, ...PROCESS_FIELDS, ...USER_GROUP_FIELDS, ...FD_FIELDS, ...CONTAINER_FIELDS],
  k8s_audit: [...genericEventFields('k8s_audit'), ...K8SAUDIT_FIELDS, ...JSON_FIELDS],
};

const INDEX: Readonly<Record<Source, ReadonlyMap<string, FieldDef>>> = {
  syscall: new Map(TABLES.syscall.map((d) => [d.name, d])),
  k8s_audit: new Map(TABLES.k8s_audit.map((d) => [d.name, d])),
};

const DOTTED: Readonly<Record<Source, readonly FieldDef[]>> = {
  syscall: TABLES.syscall.filter((d) => d.dottedArg),
  k8s_audit: TABLES.k8s_audit.filter((d) => d.dottedArg),
};

/** Every field of a source, in table order. */
export function fieldTable(source: Source): readonly FieldDef[] {
  return TABLES[source];
}

/** The table entry named exactly `name`, if any. */
export function lookupField(source: Source, name: string): FieldDef | undefined {
  return INDEX[source].get(name);
}

/** The longest entry taking a dotted argument whose name + '.' prefixes `name`. */
export function lookupDottedField(source: Source, name: string): FieldDef | undefined {
  let best: FieldDef | undefined;
  for (const d of DOTTED[source]) {
    if (name.startsWith(d.name + '.') && name.length > d.name.length + 1 && (!best || d.name.length > best.name.length)) best = d;
  }
  return best;
}
