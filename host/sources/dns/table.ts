// The DNS name table in a module's state region (RAE_STATE_DNS, probes/src/eval_abi.h): how the
// resolver's answers reach the byte path without a JS object per event. The host keeps each
// name's resolved addresses (set, from resolver.ts) and writes, for every address, the name it
// belongs to, sorted by address; the translators (ingest.ts and probes/addon/ingest.c) look an
// endpoint's address up there (lookupName) and give its name as fd.sip.name and friends, as
// libsinsp's sinsp_dns_manager::name_of does: the name of the cache whose addresses hold it
// (libs userspace/libsinsp/dns_manager.cpp). libsinsp walks its unordered cache and takes the
// first hit; here an address held by several names gets the smallest name, a fixed order.
// Until a name has resolved no address has it, so its comparisons are false (libsinsp resolves
// on first use, blocking the event; here it is resolved off the event path as rules load). One
// departure: for an IP socket whose address has no name, libsinsp's `fd.sip.name != x` falls back
// to `not match(x)` and is true (compare_domain); here the field is missing and `!=` is false,
// as for any missing field (no bundled rule uses `!=` on these fields).
// bind() points the table at another module's memory (a swap) and keeps the answers of the
// names that module's rules use; the table is rewritten whole on every change (a few hundred
// entries, between two batches: evaluation and translation are synchronous on this thread).
import { DNS, STATE } from '../../abi/module.js';
import { parseIp } from '../../engine/index.js';

/** One table entry before it is written: the address in 16 bytes and its length, the name. */
interface Entry {
  key: Uint8Array;
  alen: number;
  name: string;
}

/** Orders entries by (address length, address bytes), as the translators' binary search expects. */
function compareKeys(a: Uint8Array, alen: number, b: Uint8Array, blen: number): number {
  if (alen !== blen) return alen - blen;
  for (let i = 0; i < 16; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The resolved addresses of the rules' domain names, written into the bound module's memory. */
export class DnsTable {
  private readonly answers = new Map<string, readonly string[]>();
  private wanted: readonly string[] = [];
  private u8?: Uint8Array;
  private dv?: DataView;
  /** Addresses or name bytes left out because the table was full (at the last write). */
  dropped = 0;
  /** Called with the names of the bound module's rules (rae run hands them to the resolver). */
  onNames: (names: readonly string[]) => void = () => undefined;

  /** The names the bound module's rules compare endpoint names with. */
  get names(): readonly string[] {
    return this.wanted;
  }

  /** Points the table at a module's memory and its rules' names (names.ts domainNames) and writes it. */
  bind(memory: WebAssembly.Memory, names: readonly string[]): void {
    this.u8 = new Uint8Array(memory.buffer);
    this.dv = new DataView(memory.buffer);
    const changed = names.join('\n') !== this.wanted.join('\n');
    this.wanted = names;
    const keep = new Set(names);
    for (const n of this.answers.keys()) if (!keep.has(n)) this.answers.delete(n);
    this.write();
    if (changed) this.onNames(names);
  }

  /** The addresses `name` resolved to now (an empty list: it resolved to nothing). */
  set(name: string, addresses: readonly string[]): void {
    if (!this.wanted.includes(name)) return;
    this.answers.set(name, addresses);
    this.write();
  }

  /** The name the table gives an address (text), as the translators find it; undefined for none. */
  nameOf(address: string): string | undefined {
    const ip = parseIp(address);
    if (!this.u8 || !this.dv || !ip) return undefined;
    const found = lookupName(this.dv, this.u8, ip.bytes, 0, ip.bytes.length);
    return found && Buffer.from(this.u8.subarray(found[0], found[0] + found[1])).toString('utf8');
  }

  private write(): void {
    const u8 = this.u8;
    const dv = this.dv;
    if (!u8 || !dv) return;
    const byAddress = new Map<string, Entry>();
    for (const [name, addresses] of this.answers) {
      for (const text of addresses) {
        const ip = parseIp(text);
        if (!ip) continue;
        const key = new Uint8Array(16);
        key.set(ip.bytes);
        const id = `${ip.bytes.length}/${Buffer.from(key).toString('hex')}`;
        const had = byAddress.get(id);
        if (!had || name < had.name) byAddress.set(id, { key, alen: ip.bytes.length, name });
      }
    }
    const entries = [...byAddress.values()].sort((a, b) => compareKeys(a.key, a.alen, b.key, b.alen));
    const base = STATE.dns;
    const end = base + DNS.size;
    let heap = base + DNS.entries + DNS.slots * DNS.entrySize;
    const placed = new Map<string, [number, number]>();
    let count = 0;
    this.dropped = 0;
    for (const e of entries) {
      let ref = placed.get(e.name);
      const b = ref ? undefined : Buffer.from(e.name);
      if (count >= DNS.slots || (b && heap + b.length > end)) {
        this.dropped++;
        continue;
      }
      if (b) {
        u8.set(b, heap);
        ref = [heap, b.length];
        placed.set(e.name, ref);
        heap += b.length;
      }
      const at = base + DNS.entries + count * DNS.entrySize;
      u8.set(e.key, at);
      dv.setUint32(at + DNS.alen, e.alen, true);
      dv.setUint32(at + DNS.alen + 4, 0, true);
      dv.setUint32(at + DNS.name, ref![0], true);
      dv.setUint32(at + DNS.name + 4, ref![1], true);
      count++;
    }
    dv.setUint32(base + DNS.count, count, true);
  }
}

/**
 * The name ref (address, length) the DNS table of a module's memory gives the `alen`-byte
 * address at bytes[at..]: a binary search of its sorted entries (the C translator's dns_name
 * does the same); undefined when no name holds the address.
 */
export function lookupName(dv: DataView, u8: Uint8Array, bytes: Uint8Array, at: number, alen: number): [number, number] | undefined {
  const base = STATE.dns;
  let lo = 0;
  let hi = Math.min(dv.getUint32(base + DNS.count, true), DNS.slots);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const e = base + DNS.entries + mid * DNS.entrySize;
    let c = dv.getUint32(e + DNS.alen, true) - alen;
    for (let i = 0; c === 0 && i < 16; i++) c = u8[e + i]! - (i < alen ? bytes[at + i]! : 0);
    if (c === 0) return [dv.getUint32(e + DNS.name, true), dv.getUint32(e + DNS.name + 4, true)];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return undefined;
}
