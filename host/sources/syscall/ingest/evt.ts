// The evt.* field class of the kernel ingest (libsinsp sinsp_filtercheck_event), but for the
// syscall's parameters (evt-arg.ts): the event's number, result, time, direction, source and host,
// what an open does, and its I/O buffer, written into an eval record's slot from the SYSCALL
// record and its facts (context.ts). ingest-evt.c is the native twin.
import { HDR, SYSCALL } from '../../../abi/records.js';
import { ERRNO, O_ACCMODE, O_CREAT } from '../fields.js';
import { DATA_ARG, isOpenExec, MODE_ARG, printableData } from '../render.js';
import type { IngestContext } from './context.js';
import { modeArg } from './facts.js';
import { F } from './ingest-abi.js';

/** The fields of this class. */
export const EVT_FIELDS: readonly number[] = [F.NUM, F.RAWRES, F.RES, F.FAILED, F.READ, F.WRITE, F.CREATE, F.OPEN_EXEC, F.TIME, F.RAWTIME, F.DIRECTION, F.SOURCE, F.HOSTNAME, F.BUFFER, F.ARG_DATA];

/** Writes the 8 bytes of evt field `field` at `to`; false when the record does not provide it. */
export function evtValue(c: IngestContext, field: number, view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  const f = c.f;
  switch (field) {
    case F.NUM:
      return c.num64(to, c.num);
    case F.RAWRES:
      return c.num64(to, f.ret);
    case F.FAILED:
      return c.num64(to, f.ret >= 0 ? 0 : 1);
    case F.RES: {
      const e = f.ret >= 0 ? 'SUCCESS' : ERRNO[-f.ret];
      return e !== undefined && c.constant(e, to);
    }
    case F.READ:
    case F.WRITE:
    case F.CREATE: {
      if (!f.file) return field !== F.CREATE && c.num64(to, 0); // false for other syscalls
      const acc = f.flags & O_ACCMODE;
      const v = field === F.READ ? acc === 0 || acc === 2 : field === F.WRITE ? acc === 1 || acc === 2 : (f.flags & O_CREAT) !== 0;
      return c.num64(to, v ? 1 : 0);
    }
    case F.OPEN_EXEC: {
      const m = f.file ? MODE_ARG[f.name] : undefined;
      return c.num64(to, m !== undefined && isOpenExec(f.flags, modeArg(vd, off, m[0])) ? 1 : 0);
    }
    case F.RAWTIME:
      c.dv.setBigUint64(to, BigInt.asUintN(64, vd.getBigUint64(off + HDR.ts_ns, true) + c.epoch), true);
      return true;
    case F.TIME: {
      const b = Buffer.from(String(BigInt.asUintN(64, vd.getBigUint64(off + HDR.ts_ns, true) + c.epoch)));
      const at = c.alloc(b.length);
      if (at === 0) return false;
      c.u8.set(b, at);
      return c.ref(to, at, b.length);
    }
    case F.DIRECTION:
      return c.constant('<', to);
    case F.SOURCE:
      return c.constant('syscall', to);
    case F.HOSTNAME:
      return c.constant(c.hostname, to);
    case F.BUFFER:
    case F.ARG_DATA: {
      // the record's I/O buffer: evt.buffer its bytes, evt.arg.data its printable rendering (render.ts printableData; ingest-evt.c data_value)
      const o = vd.getUint16(off + SYSCALL.data, true);
      const l = vd.getUint16(off + SYSCALL.data + 2, true);
      if (!DATA_ARG.has(f.name) || o === 0) return false;
      if (field === F.BUFFER) return c.copyRange(view, off + o, l, to);
      const at = c.alloc(l);
      if (at === 0) return false;
      c.u8.set(printableData(view.subarray(off + o, off + o + l)), at);
      return c.ref(to, at, l);
    }
    default:
      return false;
  }
}
