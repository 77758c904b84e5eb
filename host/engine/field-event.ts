// The plain "field event" test format: one JSON object per line,
//   {"source":"syscall","time":"<RFC3339>","fields":{"evt.type":"openat","fd.name":"/etc/shadow",...}}
// Fields are keyed by their canonical text (`proc.aname[2]`). A few are derived when absent, as
// the live sources would: `proc.aname[0]` is proc.name, `proc.aname[1]` proc.pname, an
// un-indexed `proc.aname` (a list of ancestors from the parent up) yields `proc.aname[N]`, and
// `fd.ip`/`fd.port` are both endpoints of fd.cip/fd.sip and fd.cport/fd.sport, and `fd.snet` is fd.sip.
import type { FieldRef } from './ir.js';
import type { EventAccessor, RawScalar, RawValue } from './interpreter.js';

const ANCESTOR_BASE: Record<string, string> = {
  'proc.aname': 'proc.name',
  'proc.aexe': 'proc.exe',
  'proc.aexepath': 'proc.exepath',
  'proc.apid': 'proc.pid',
  'proc.acmdline': 'proc.cmdline',
};
const PARENT_OF: Record<string, string> = {
  'proc.name': 'proc.pname',
  'proc.exe': 'proc.pexe',
  'proc.exepath': 'proc.pexepath',
  'proc.pid': 'proc.ppid',
  'proc.cmdline': 'proc.pcmdline',
};
/** Network fields derived from the matching address field. */
const NETWORK_OF: Record<string, string> = { 'fd.snet': 'fd.sip', 'fd.cnet': 'fd.cip', 'fd.rnet': 'fd.rip', 'fd.lnet': 'fd.lip' };
const ENDPOINTS: Record<string, [string, string]> = {
  'fd.ip': ['fd.cip', 'fd.sip'],
  'fd.net': ['fd.cip', 'fd.sip'],
  'fd.port': ['fd.cport', 'fd.sport'],
};

function isScalar(v: unknown): v is RawScalar {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint';
}

/** Field access over a `fields` object. */
export class FieldEvent implements EventAccessor {
  constructor(
    private readonly values: Record<string, unknown>,
    private readonly generic: { source: string; timeNs: bigint; num: bigint },
  ) {}

  private raw(key: string): RawValue | undefined {
    const v = this.values[key];
    if (isScalar(v)) return v;
    if (Array.isArray(v) && v.every(isScalar)) return v as RawScalar[];
    return undefined;
  }

  field(ref: FieldRef): RawValue | undefined {
    const direct = this.raw(ref.canonical);
    if (direct !== undefined) return direct;
    const name = ref.def.name;
    switch (ref.canonical) {
      case 'evt.time':
      case 'evt.rawtime':
        return this.generic.timeNs;
      case 'evt.source':
        return this.generic.source;
      case 'evt.num':
        return this.generic.num;
      default:
        break;
    }
    const base = ANCESTOR_BASE[name];
    if (base) return this.ancestor(name, base, ref.arg);
    if (NETWORK_OF[name]) return this.raw(NETWORK_OF[name]!);
    const ends = ENDPOINTS[name];
    if (ends) {
      const vs = ends.map((k) => this.raw(k)).filter((v): v is RawScalar => isScalar(v));
      return vs.length > 0 ? vs : undefined;
    }
    return undefined;
  }

  private ancestor(name: string, base: string, arg: string | undefined): RawValue | undefined {
    const chain = this.raw(name);
    const list = Array.isArray(chain) ? chain : undefined;
    if (arg === undefined) {
      if (list) return list;
      const parent = this.raw(PARENT_OF[base]!);
      return isScalar(parent) ? [parent] : undefined;
    }
    const n = Number(arg);
    if (n === 0) return this.raw(base);
    if (list) return list[n - 1];
    if (n === 1) return this.raw(PARENT_OF[base]!);
    return undefined;
  }
}
