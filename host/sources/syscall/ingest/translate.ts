// The JS translator of one SYSCALL record into an eval record: its header (evt.type, thread
// entry), then each slot of the module's plan filled by the field's class (evt.ts, evt-arg.ts,
// fd.ts, proc.ts, container.ts), as libsinsp's filterchecks split the fields; a slot the record
// gives a value gets its presence bit. The reference the native translator (ingest.c) is
// compared with, and its fallback.
import { REC } from '../../../abi/module.js';
import { HDR } from '../../../abi/records.js';
import { NR_SYSCALLS } from '../syscalls.js';
import { CONTAINER_FIELDS, containerValue } from './container.js';
import type { IngestContext, Plan } from './context.js';
import { EVT_FIELDS, evtValue } from './evt.js';
import { EVT_ARG_FIELDS, evtArgValue } from './evt-arg.js';
import { readFacts } from './facts.js';
import { FD_FIELDS, fdValue } from './fd.js';
import { F } from './ingest-abi.js';
import { PROC_FIELDS, procValue } from './proc.js';
import { TYPE_IDS } from './syscall-class.js';

/** A field class's writer: the 8 bytes of `field` at `to`; false when the record does not provide it. */
type ClassValue = (c: IngestContext, field: number, view: Uint8Array, vd: DataView, off: number, to: number) => boolean;

/** The class writer of each field id. */
const VALUE_OF: ClassValue[] = [];
for (const [fields, value] of [
  [EVT_FIELDS, evtValue],
  [EVT_ARG_FIELDS, evtArgValue],
  [FD_FIELDS, fdValue],
  [PROC_FIELDS, procValue],
  [CONTAINER_FIELDS, containerValue],
] as const) {
  for (const id of fields) {
    if (VALUE_OF[id] !== undefined) throw new Error(`ingest: field id ${id} is in two field classes`);
    VALUE_OF[id] = value;
  }
}
const unclassed = Object.entries(F).filter(([, id]) => VALUE_OF[id] === undefined);
if (unclassed.length > 0) throw new Error(`ingest: field ids without a field class: ${unclassed.map(([k]) => k).join(', ')}`);

/** Writes the eval record of the SYSCALL record at `off` at `at`; `thread` is its process's entry (default: the table's now). */
export function translateRecord(c: IngestContext, plan: Plan, view: Uint8Array, vd: DataView, off: number, at: number, thread = c.threads.entryOfPid(vd.getUint32(off + HDR.pid, true))): void {
  const nr = vd.getUint16(off + HDR.nr, true);
  const dv = c.dv;
  dv.setUint32(at + REC.type, nr < NR_SYSCALLS ? TYPE_IDS[nr]! : 0, true);
  dv.setUint32(at + REC.thread, thread, true);
  c.num++;
  if (plan.slots.length === 0) return;
  readFacts(c, view, vd, off, nr);
  c.f.thread = dv.getUint32(at + REC.thread, true);
  for (let j = 0; j < plan.slots.length; j++) {
    const { slot, field, key } = plan.slots[j]!;
    c.key = key;
    const value = VALUE_OF[field];
    if (value === undefined || !value(c, field, view, vd, off, at + slot.offset)) continue;
    const w = at + REC.present + 4 * (slot.index >> 5);
    dv.setUint32(w, dv.getUint32(w, true) | (1 << (slot.index & 31)), true);
  }
}
