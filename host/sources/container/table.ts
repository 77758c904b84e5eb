// The container table in a module's state region (RAE_STATE_CONTAINERS, probes/src/eval_abi.h):
// how container.* and k8s.* metadata reaches the compiled rules without a JS object per event.
// The thread table gives each process the address of its container's entry (slotFor, when it
// sees the container id in a cgroup path); the host writes an entry's values when the metadata
// cache learns the container (learn) and clears them when it forgets it (forget), so until then
// the fields are missing (<NA>, comparisons false). The compiled rules and the TS oracle
// (containerFields) read the same bytes. Keyed fields (container.label[k], container.mount.dest[k]
// ...) are written for the keys the live module uses (its containerKeys), in that order.
// container.start_ts is not the runtime's: it is the start of the container's pid-namespace init,
// which the thread table reports (started) from the kernel's process records, as libsinsp and the
// container plugin read it from the thread's pidns_init_start_ts; the entry holds it as epoch ns
// (container.duration is the event time minus it, ingest.ts).
// A container's start judged before its metadata came (the init's exec, read as missing) is judged
// again when learn() brings it (onLearned; runtime/late-starts.ts): the table marks the init execs
// of containers it does not know yet (initExec, for the ingest to find their events) and gives the
// fields of an entry as the rules read them (fieldsOf).
import { CTR, CTR_FLAGS, CTR_START_BIT, CTR_STRINGS, flagBit, STATE, writeContainerEntry, type ContainerKey } from '../../abi/module.js';
import { keyedValue, recordFields, type ContainerRecord } from './record.js';

const ABSENT = 0xffffffff;
/** Init execs marked at most (initExecs): a mark whose execve event never comes (no rule reads execve) ages out. */
const INIT_EXECS = 256;

/** Container entries by id; bind() to the live module's memory (rewrites every entry). */
export class ContainerTable {
  private readonly slots = new Map<string, number>();
  private readonly records = new Map<string, ContainerRecord>();
  /** Start of each container's pid-namespace init, CLOCK_BOOTTIME ns (started). */
  private readonly starts = new Map<string, bigint>();
  /** CLOCK_BOOTTIME -> epoch offset the entries' start_ts use (setBootToEpoch). */
  private bootToEpoch = 0n;
  /** Entries of forgotten containers, reused for new ids. */
  private readonly free: number[] = [];
  private next: number = STATE.containers;
  private keys: readonly ContainerKey[] = [];
  private memory?: WebAssembly.Memory;
  private u8?: Uint8Array;
  private dv?: DataView;
  /**
   * The init execs (vpid 1) of containers without metadata, container id by pid, until the
   * ingest finds their execve event (at most INIT_EXECS: the oldest goes first).
   */
  readonly initExecs = new Map<number, string>();
  /** Ids that got no entry (table full), and values cut because an entry was full. */
  dropped = 0;
  truncated = 0;
  /** Called once for each id the table sees first (rae run asks the metadata cache). */
  onNewId: (id: string) => void = () => undefined;
  /** Called after learn() wrote a container's metadata (rae run judges its late start again). */
  onLearned: (id: string) => void = () => undefined;

  /** Points the table at a module's memory and key list and writes every entry. */
  bind(memory: WebAssembly.Memory, keys: readonly ContainerKey[]): void {
    this.memory = memory;
    this.u8 = new Uint8Array(memory.buffer);
    this.dv = new DataView(memory.buffer);
    this.keys = keys.slice(0, CTR.keySlots);
    for (const [id, at] of this.slots) this.write(at, id);
  }

  /** The boot-to-epoch offset of record times; entries are rewritten when it changes. */
  setBootToEpoch(ns: bigint): void {
    if (ns === this.bootToEpoch) return;
    this.bootToEpoch = ns;
    for (const [id, at] of this.slots) this.writeStart(at, id);
  }

  /**
   * The init of a pid namespace that processes of container `id` run in started at `bootNs`
   * (CLOCK_BOOTTIME): its container.start_ts. The earliest wins (a namespace nested in the
   * container started after the container's own).
   */
  started(id: string, bootNs: bigint): void {
    const at = this.slots.get(id);
    const old = this.starts.get(id);
    if (at === undefined || bootNs === 0n || (old !== undefined && old <= bootNs)) return;
    this.starts.set(id, bootNs);
    this.writeStart(at, id);
  }

  /** The entry address of a container id (12 characters or 'host'), allocated on first sight; 0 when the table is full. */
  slotFor(id: string): number {
    let at = this.slots.get(id);
    if (at !== undefined) return at;
    at = this.free.pop() ?? (this.next < STATE.containers + CTR.slots * CTR.size ? this.next : 0);
    if (at === 0) {
      this.dropped++;
      return 0;
    }
    if (at === this.next) this.next += CTR.size;
    this.slots.set(id, at);
    this.write(at, id);
    if (id !== 'host') this.onNewId(id);
    return at;
  }

  /** The metadata of a container arrived (or changed): its entry carries it from now on. */
  learn(r: ContainerRecord): void {
    this.records.set(r.id, r);
    const at = this.slots.get(r.id);
    if (at !== undefined) this.write(at, r.id);
    this.onLearned(r.id);
  }

  /** Whether the metadata of container `id` has come. */
  knows(id: string): boolean {
    return this.records.has(id);
  }

  /** Process `pid` exec'd as the init (vpid 1) of container `id`: marked while the container's metadata is missing. */
  initExec(pid: number, id: string): void {
    if (id === 'host' || this.records.has(id)) return;
    if (this.initExecs.size >= INIT_EXECS) this.initExecs.delete(this.initExecs.keys().next().value!);
    this.initExecs.set(pid, id);
  }

  /** The container fields of container `id` as the compiled rules read them now (containerFields); none when it has no entry. */
  fieldsOf(id: string): Record<string, unknown> {
    const at = this.slots.get(id);
    return at === undefined || !this.memory ? {} : containerFields(this.memory, at, this.keys);
  }

  /** The runtime deleted the container: its fields are missing again and its entry is reused. */
  forget(id: string): void {
    this.records.delete(id);
    this.starts.delete(id);
    const at = this.slots.get(id);
    if (at === undefined) return;
    this.write(at, id);
    this.slots.delete(id);
    this.free.push(at);
  }

  /** Sets or clears the start_ts of the entry at `at` (container `id`). */
  private writeStart(at: number, id: string): void {
    const dv = this.dv;
    if (!dv) return;
    const start = this.starts.get(id);
    const present = dv.getUint32(at + CTR.present, true) & ~CTR_START_BIT;
    dv.setBigInt64(at + CTR.startTs, start === undefined ? 0n : BigInt.asIntN(64, start + this.bootToEpoch), true);
    dv.setUint32(at + CTR.present, start === undefined ? present : present | CTR_START_BIT, true);
  }

  /** Writes the entry of container `id`: every value of its record (none while it is unknown) and its start_ts. */
  private write(at: number, id: string): void {
    const u8 = this.u8;
    const dv = this.dv;
    if (!u8 || !dv) return;
    const r = id === 'host' ? HOST : this.records.get(id);
    const fields: Record<string, string | undefined> = !r ? {} : r === HOST ? { 'container.name': 'host' } : recordFields(r);
    const start = this.starts.get(id);
    let heap = at + CTR.strings;
    const end = at + CTR.size;
    const place = (ref: number, text: string): boolean => {
      const b = Buffer.from(text);
      if (heap + b.length > end) return false;
      u8.set(b, heap);
      dv.setUint32(ref, heap, true);
      dv.setUint32(ref + 4, b.length, true);
      heap += b.length;
      return true;
    };
    this.truncated += writeContainerEntry(
      dv,
      at,
      {
        strings: CTR_STRINGS.map((name) => fields[name]),
        flags: CTR_FLAGS.map((name) => (fields[name] === undefined ? undefined : fields[name] === 'true')),
        startTs: start === undefined ? undefined : start + this.bootToEpoch,
        keyed: r && r !== HOST ? this.keys.map((k) => keyedValue(r, k.name, k.arg)) : [],
      },
      place,
    );
  }
}

/** Host processes: container.name 'host' (Falco's dummy entry), nothing else. */
const HOST = { id: 'host', name: 'host' } as unknown as ContainerRecord;

/**
 * The container fields of the entry at `at` (0: none), read back from linear memory as the
 * compiled rules read them: the TS oracle and alert outputs. Keyed fields under their canonical text.
 */
export function containerFields(memory: WebAssembly.Memory, at: number, keys: readonly ContainerKey[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (at === 0) return out;
  const dv = new DataView(memory.buffer);
  const u8 = new Uint8Array(memory.buffer);
  const text = (ref: number) => Buffer.from(u8.subarray(dv.getUint32(ref, true), dv.getUint32(ref, true) + dv.getUint32(ref + 4, true))).toString('utf8');
  const present = dv.getUint32(at + CTR.present, true);
  const flags = dv.getUint32(at + CTR.flags, true);
  CTR_STRINGS.forEach((name, i) => {
    if (present & (1 << i)) out[name] = text(at + CTR.refs + 8 * i);
  });
  CTR_FLAGS.forEach((name, i) => {
    if (present & flagBit(i)) out[name] = (flags & (1 << i)) !== 0;
  });
  if (present & CTR_START_BIT) out['container.start_ts'] = dv.getBigInt64(at + CTR.startTs, true);
  keys.slice(0, CTR.keySlots).forEach((k, i) => {
    if (dv.getUint32(at + CTR.keys + 8 * i, true) !== ABSENT) out[k.canonical] = text(at + CTR.keys + 8 * i);
  });
  return out;
}
