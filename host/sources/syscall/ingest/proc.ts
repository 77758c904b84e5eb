// The proc.* and thread.* field classes of the kernel ingest (libsinsp sinsp_filtercheck_thread)
// that the eval record carries: proc.duration, proc.env[NAME] and thread.tid. The other process
// fields the rules read live in the thread entry the record points at (thread-table.ts), not in
// the record's slots. ingest-proc.c is the native twin.
import { THREAD, TP } from '../../../abi/module.js';
import { HDR } from '../../../abi/records.js';
import { envValue } from '../env-index.js';
import type { IngestContext } from './context.js';
import { F } from './ingest-abi.js';

/** The fields of this class. */
export const PROC_FIELDS: readonly number[] = [F.DURATION, F.PROC_ENV, F.TID];

/** Writes the 8 bytes of proc/thread field `field` at `to`; false when the record does not provide it. */
export function procValue(c: IngestContext, field: number, _view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  const f = c.f;
  switch (field) {
    case F.DURATION: {
      const start = f.thread === 0 ? undefined : c.threads.startOf(f.thread);
      if (start === undefined) return false;
      const d = BigInt.asIntN(64, vd.getBigUint64(off + HDR.ts_ns, true) - start);
      c.dv.setBigInt64(to, d, true);
      return true;
    }
    case F.PROC_ENV: {
      // proc.env[NAME]: the variable's value in the process's environment, "" when it has none
      // (sinsp_filtercheck_thread.cpp TYPE_ENV: tinfo->get_env(m_argname), no ancestor lookup:
      // that is proc.aenv[NAME]); missing when the process or its environment is unknown
      const found = c.key === undefined ? undefined : envRange(c, f.thread, c.key);
      if (found === undefined) return false;
      const dst = c.alloc(found[1]);
      if (dst === 0) return false;
      c.u8.set(c.mem.subarray(found[0], found[0] + found[1]), dst);
      return c.ref(to, dst, found[1]);
    }
    case F.TID:
      return c.num64(to, vd.getUint32(off + HDR.tid, true));
    default:
      return false;
  }
}

/** proc.env[key] of the process whose entry is at `thread`: its (address, length) in the module's memory; undefined when the process or its environment is unknown. */
export function envRange(c: IngestContext, thread: number, key: Uint8Array): readonly [number, number] | undefined {
  const md = c.memDv;
  if (thread === 0 || (md.getUint32(thread + THREAD.present, true) & TP.ENV) === 0) return undefined;
  return envValue(c.mem, md.getUint32(thread + THREAD.env, true), md.getUint32(thread + THREAD.env + 4, true), key);
}
