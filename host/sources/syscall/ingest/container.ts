// The container.* field class of the kernel ingest that the eval record carries: container.duration
// (the event's time minus the container's start). The other container and k8s fields live in the
// container entry the process's thread entry points at (../../container/table.ts), not in the
// record's slots. ingest-proc.c is the native twin.
import { CTR, CTR_START_BIT, THREAD } from '../../../abi/module.js';
import { HDR } from '../../../abi/records.js';
import type { IngestContext } from './context.js';
import { F } from './ingest-abi.js';

/** The fields of this class. */
export const CONTAINER_FIELDS: readonly number[] = [F.CTR_DURATION];

/** Writes the 8 bytes of container field `field` at `to`; false when the record does not provide it. */
export function containerValue(c: IngestContext, field: number, _view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  if (field !== F.CTR_DURATION) return false;
  // the process's container entry holds start_ts as epoch ns (container/table.ts)
  const md = c.memDv;
  const thread = c.f.thread;
  const ctr = thread === 0 ? 0 : md.getUint32(thread + THREAD.ctr, true);
  if (ctr === 0 || (md.getUint32(ctr + CTR.present, true) & CTR_START_BIT) === 0) return false;
  const now = vd.getBigUint64(off + HDR.ts_ns, true) + c.epoch;
  c.dv.setBigInt64(to, BigInt.asIntN(64, now - md.getBigUint64(ctr + CTR.startTs, true)), true);
  return true;
}
