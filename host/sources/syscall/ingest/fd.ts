// The fd.* field class of the kernel ingest (libsinsp sinsp_filtercheck_fd): the file descriptor
// a SYSCALL record names or makes, its path, type and socket ends, written into an eval record's
// slot from the record and its facts (context.ts). fd.*.name give the domain name the module's
// DNS table holds for an end's address (../../dns/table.ts). ingest-fd.c is the native twin.
import { AF, SOCKADDR, SYSCALL } from '../../../abi/records.js';
import { lookupName } from '../../dns/index.js';
import { connTuple, endpointText, FD_FROM_ARG0, FD_FROM_RET, l4Type, SERVER_SIDE } from '../fields.js';
import type { Facts, IngestContext } from './context.js';
import { F } from './ingest-abi.js';

/** The fields of this class. */
export const FD_FIELDS: readonly number[] = [
  F.FDNUM,
  F.NAME,
  F.NAMERAW,
  F.DIR,
  F.FILE,
  F.TYPECHAR,
  F.TYPE,
  F.FAMILY,
  F.SIP,
  F.CIP,
  F.LIP,
  F.RIP,
  F.SPORT,
  F.CPORT,
  F.LPORT,
  F.RPORT,
  F.IPS,
  F.PORTS,
  F.L4PROTO,
  F.CONNECTED,
  F.NAME_CHANGED,
  F.SIP_NAME,
  F.CIP_NAME,
  F.LIP_NAME,
  F.RIP_NAME,
];

/**
 * fd.typechar and fd.type of the socket socket(2) made, by its domain: libsinsp's add_socket
 * (parsers.cpp) types AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK sockets, any other domain is
 * SCAP_FD_UNKNOWN ('o', "<NA>"); a failed call makes none.
 */
const SOCKET_TYPE: Readonly<Record<number, readonly [string, string]>> = { [AF.UNIX]: ['u', 'unix'], [AF.INET]: ['4', 'ipv4'], [AF.INET6]: ['6', 'ipv6'], 16: ['n', 'netlink'] };
/** fd.l4proto by socket type 1..3 (SOCK_STREAM, SOCK_DGRAM, SOCK_RAW). */
export const L4 = ['tcp', 'udp', 'raw'] as const;

/** Writes the 8 bytes of fd field `field` at `to`; false when the record does not provide it. */
export function fdValue(c: IngestContext, field: number, view: Uint8Array, vd: DataView, off: number, to: number): boolean {
  const f = c.f;
  switch (field) {
    case F.FDNUM:
      if (FD_FROM_RET.has(f.name)) return c.num64(to, f.ret >= 0 ? f.ret : -1); // a failed call: -1
      if (FD_FROM_ARG0.has(f.name)) return c.num64(to, vd.getInt32(off + SYSCALL.args, true));
      return false;
    case F.NAME:
      // an opened file, a unix socket's path or an IPv4 tuple (other syscalls' paths are no fd's name)
      if (f.fdLen === 0 && f.fdName === 0) return (f.fam === AF.INET || f.fam === AF.INET6) && c.constant(f.servSock ? endpointText(vd, f.server) : connTuple(vd, f.client, f.server), to);
      return (f.file || f.fam === AF.UNIX) && c.fdName(view, to);
    case F.NAMERAW:
      if (!f.file) return fdValue(c, F.NAME, view, vd, off, to);
      return f.rawOff !== 0 && c.copyRange(view, f.rawOff, f.rawLen, to);
    case F.DIR:
    case F.FILE:
      return pathPart(c, field, view, to);
    case F.TYPECHAR:
    case F.TYPE:
      return fdType(c, field === F.TYPECHAR ? 0 : 1, to);
    case F.FAMILY:
      if (f.name === 'socket') return f.ret >= 0 && (f.flags === AF.INET || f.flags === AF.INET6 ? c.constant('ip', to) : f.flags === AF.UNIX && c.constant('unix', to));
      return f.fam === AF.INET || f.fam === AF.INET6 ? c.constant('ip', to) : f.fam === AF.UNIX && c.constant('unix', to);
    case F.SIP:
    case F.CIP:
    case F.LIP:
    case F.RIP:
      return ip(c, view, vd, endOf(f, field - F.SIP), to);
    case F.SPORT:
    case F.CPORT:
    case F.LPORT:
    case F.RPORT:
      return port(c, vd, endOf(f, field - F.SPORT), to);
    case F.IPS:
    case F.PORTS: {
      const at = c.alloc(16);
      if (at === 0) return false;
      let n = 0;
      for (const sa of [f.client, f.server]) {
        if (field === F.IPS ? ip(c, view, vd, sa, at + 8 * n) : port(c, vd, sa, at + 8 * n)) n++;
      }
      return n > 0 && c.ref(to, at, n);
    }
    case F.L4PROTO: {
      const t = l4Type(f.name, f.fam, vd, off);
      return t !== undefined && c.constant(L4[t - 1]!, to);
    }
    case F.CONNECTED:
      return c.num64(to, f.name === 'connect' ? (f.ret >= 0 || f.ret === -115 ? 1 : 0) : SERVER_SIDE.has(f.name) ? 1 : 0);
    case F.NAME_CHANGED:
      return c.num64(to, (f.name === 'sendto' || f.name === 'sendmsg') && vd.getUint16(off + SYSCALL.peer + SOCKADDR.family, true) !== 0 ? 1 : 0);
    case F.SIP_NAME:
    case F.CIP_NAME:
    case F.LIP_NAME:
    case F.RIP_NAME:
      return endpointName(c, view, vd, endOf(f, field - F.SIP_NAME), to);
    default:
      return false;
  }
}

/** The socket end of a per-end field by its place in its group (fd.sip, cip, lip, rip; the ports and names alike). */
function endOf(f: Facts, i: number): number {
  return i === 0 ? f.server : i === 1 ? f.client : i === 2 ? f.local : f.peer;
}

/** fd.directory or fd.filename of an opened file: fd.name up to or after its last '/'. */
function pathPart(c: IngestContext, field: number, view: Uint8Array, to: number): boolean {
  const f = c.f;
  if (!f.file || (f.fdLen === 0 && f.fdName === 0) || !c.fdName(view, to)) return false;
  const a = f.fdName;
  const l = f.fdLen;
  let k = l - 1;
  while (k >= 0 && c.u8[a + k] !== 47) k--;
  if (field === F.FILE) return c.ref(to, a + k + 1, l - k - 1);
  return k >= 0 && c.ref(to, a, k === 0 ? 1 : k);
}

/** fd.typechar (i = 0) or fd.type (i = 1). */
function fdType(c: IngestContext, i: 0 | 1, to: number): boolean {
  const f = c.f;
  if (f.file) return c.constant(f.dirFlag ? (['d', 'directory'] as const)[i] : (['f', 'file'] as const)[i], to);
  if (f.name === 'socket') return f.ret >= 0 && c.constant(SOCKET_TYPE[f.flags]?.[i] ?? (['o', '<NA>'] as const)[i], to);
  if (f.fam === AF.INET) return c.constant((['4', 'ipv4'] as const)[i], to);
  if (f.fam === AF.INET6) return c.constant((['6', 'ipv6'] as const)[i], to);
  if (f.fam === AF.UNIX) return c.constant((['u', 'unix'] as const)[i], to);
  return false;
}

/** The address length of an IP end (4 or 16), 0 for any other family. */
function ipLength(vd: DataView, sa: number): number {
  const fam = vd.getUint16(sa + SOCKADDR.family, true);
  return fam === AF.INET ? 4 : fam === AF.INET6 ? 16 : 0;
}

/** An IP end's address; `sa` -1 = no such end (a server socket's client, local and remote ends). */
function ip(c: IngestContext, view: Uint8Array, vd: DataView, sa: number, to: number): boolean {
  if (sa < 0) return false;
  const n = ipLength(vd, sa);
  return n !== 0 && c.copyRange(view, sa + SOCKADDR.addr, n, to);
}

/**
 * An IP end's domain name: the name the DNS table of the module's memory gives its address
 * (dns/table.ts, libsinsp sinsp_filtercheck_fd.cpp TYPE_SERVERIP_NAME... extracting
 * sinsp_dns_manager::name_of); none for an address no rule's name resolved to.
 */
function endpointName(c: IngestContext, view: Uint8Array, vd: DataView, sa: number, to: number): boolean {
  if (sa < 0) return false;
  const n = ipLength(vd, sa);
  const found = n === 0 ? undefined : lookupName(c.memDv, c.mem, view, sa + SOCKADDR.addr, n);
  if (!found) return false;
  if (c.u8 === c.mem) return c.ref(to, found[0], found[1]);
  return c.copyRange(c.mem, found[0], found[1], to);
}

function port(c: IngestContext, vd: DataView, sa: number, to: number): boolean {
  if (sa < 0) return false;
  const fam = vd.getUint16(sa + SOCKADDR.family, true);
  return (fam === AF.INET || fam === AF.INET6) && c.num64(to, vd.getUint16(sa + SOCKADDR.port, true));
}
