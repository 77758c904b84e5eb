// Which field id (ingest-abi.ts F) fills the slot of each field name a rule can read from a kernel
// record, and fieldsOf's scratch layout of all of them. Consumes the engine's field registry and
// slot layout; the table must name exactly the fields of fields.ts KERNEL_RECORD_FIELDS.
import { lookupField } from '../../../engine/index.js';
import { SlotTable } from '../../../engine/codegen/index.js';
import { KERNEL_RECORD_FIELDS } from '../fields.js';
import type { Plan } from './context.js';
import { F } from './ingest-abi.js';

/** Keyed fields a translator fills from its slot's argument (the plan carries the key's bytes). */
export const BY_KEYED: Record<string, number> = { 'proc.env': F.PROC_ENV };
export const BY_FIELD: Record<string, number> = {
  'evt.num': F.NUM,
  'evt.rawres': F.RAWRES,
  'evt.res': F.RES,
  'evt.failed': F.FAILED,
  'fd.num': F.FDNUM,
  'fd.name': F.NAME,
  'fd.nameraw': F.NAMERAW,
  'fd.directory': F.DIR,
  'fd.filename': F.FILE,
  'fd.typechar': F.TYPECHAR,
  'fd.type': F.TYPE,
  'evt.is_open_read': F.READ,
  'evt.is_open_write': F.WRITE,
  'evt.is_open_create': F.CREATE,
  'fd.sip': F.SIP,
  'fd.cip': F.CIP,
  'fd.lip': F.LIP,
  'fd.rip': F.RIP,
  'fd.snet': F.SIP,
  'fd.cnet': F.CIP,
  'fd.lnet': F.LIP,
  'fd.rnet': F.RIP,
  'fd.sport': F.SPORT,
  'fd.cport': F.CPORT,
  'fd.lport': F.LPORT,
  'fd.rport': F.RPORT,
  'fd.ip': F.IPS,
  'fd.net': F.IPS,
  'fd.port': F.PORTS,
  'fd.sockfamily': F.FAMILY,
  'evt.arg.flags': F.ARG_FLAGS,
  'evt.arg.target': F.ARG_TARGET,
  'evt.arg.oldpath': F.ARG_OLDPATH,
  'evt.arg.domain': F.ARG_DOMAIN,
  'evt.arg.request': F.ARG_REQUEST,
  'fd.l4proto': F.L4PROTO,
  'fd.connected': F.CONNECTED,
  'fd.name_changed': F.NAME_CHANGED,
  'proc.duration': F.DURATION,
  'container.duration': F.CTR_DURATION,
  'evt.arg.name': F.ARG_NAME,
  'evt.arg.path': F.ARG_PATH,
  'evt.arg.filename': F.ARG_FILENAME,
  'evt.arg.newpath': F.ARG_NEWPATH,
  'evt.arg.mode': F.ARG_MODE,
  'evt.arg.fd': F.ARG_FD,
  'evt.arg.uid': F.ARG_UID,
  'evt.arg.cmd': F.ARG_CMD,
  'thread.tid': F.TID,
  'evt.time': F.TIME,
  'evt.rawtime': F.RAWTIME,
  'evt.dir': F.DIRECTION,
  'evt.source': F.SOURCE,
  'evt.hostname': F.HOSTNAME,
  'evt.is_open_exec': F.OPEN_EXEC,
  'evt.arg.pid': F.ARG_PID,
  'evt.arg.dirfd': F.ARG_DIRFD,
  'evt.arg.res': F.ARG_RES,
  'evt.arg.linkpath': F.ARG_LINKPATH,
  'fd.sip.name': F.SIP_NAME,
  'fd.cip.name': F.CIP_NAME,
  'fd.lip.name': F.LIP_NAME,
  'fd.rip.name': F.RIP_NAME,
  'evt.buffer': F.BUFFER,
  'evt.arg.data': F.ARG_DATA,
};
if (Object.keys(BY_FIELD).sort().join() !== [...KERNEL_RECORD_FIELDS].sort().join()) throw new Error('ingest: the field table is out of step with KERNEL_RECORD_FIELDS');

/** The event's own fields, which alerts take from the event rather than its record (FieldEvent's generic fields). */
const GENERIC = new Set(['evt.num', 'evt.time', 'evt.rawtime', 'evt.source']);
/**
 * fieldsOf's layout: a slot for every field of the table but the generic ones (fd.ip, fd.net and
 * fd.port as lists of both endpoints, as rules read them), and its plan.
 */
export const SCRATCH = (() => {
  const table = new SlotTable('syscall');
  const fields = Object.keys(BY_FIELD)
    .filter((k) => !GENERIC.has(k))
    .map((canonical) => {
      const arg = canonical.startsWith('evt.arg.') ? canonical.slice('evt.arg.'.length) : undefined;
      const def = lookupField('syscall', arg === undefined ? canonical : 'evt.arg')!;
      // an alert prints evt.buffer as libsinsp does outside comparisons: its rendering, evt.arg.data's text
      const field = canonical === 'evt.buffer' ? F.ARG_DATA : BY_FIELD[canonical]!;
      return { slot: table.slot({ kind: 'field', def, arg, canonical, type: def.type, isList: def.isList }, field === F.IPS || field === F.PORTS), field };
    });
  const layout = table.layout();
  return { layout, plan: { slots: fields, stride: layout.stride, words: new Int32Array(0) } satisfies Plan };
})();
