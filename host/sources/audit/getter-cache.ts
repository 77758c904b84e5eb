// A bounded cache of field getters by field name, then by argument, shared by the audit event
// accessors (document.ts, byte-event.ts): a getter is resolved once per name and argument (name
// tables, key paths), with no key text built per read. Keyed by text, not by FieldRef object:
// callers such as the output formatter build a fresh FieldRef per call (an identity cache would
// only grow). Past the bound a getter is resolved per call.

/** The cached getter lookup over `resolve`. */
export function getterCache<G>(resolve: (name: string, arg: string | undefined) => G): (name: string, arg: string | undefined) => G {
  const getters = new Map<string, { plain?: G; byArg: Map<string, G> }>();
  let count = 0;
  return (name, arg) => {
    let entry = getters.get(name);
    const hit = entry === undefined ? undefined : arg === undefined ? entry.plain : entry.byArg.get(arg);
    if (hit !== undefined) return hit;
    const get = resolve(name, arg);
    if (count < 4096) {
      count++;
      if (entry === undefined) getters.set(name, (entry = { byArg: new Map() }));
      if (arg === undefined) entry.plain = get;
      else entry.byArg.set(arg, get);
    }
    return get;
  };
}
