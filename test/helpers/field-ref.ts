// A field reference for tests that read syscall events without a rule: what the checker makes of
// a field as written in a condition (host/engine/checker.ts field()), from its canonical text.
import type { FieldRef } from '../../host/engine/ir.js';
import { resolveField } from '../../host/engine/fields/index.js';

/** The reference to syscall field `canonical` (`fd.name`, `evt.arg.flags`, `proc.env[HOME]`); throws when it does not resolve. */
export function fieldRef(canonical: string): FieldRef {
  const [, name, arg] = /^([^[]+)(?:\[(.*)\])?$/.exec(canonical) ?? [];
  const r = resolveField('syscall', name ?? canonical, arg);
  if (!r.ok) throw new Error(`${canonical}: ${r.message}`);
  return { kind: 'field', def: r.def, arg: r.arg, canonical, type: r.def.type, isList: r.def.isList };
}
