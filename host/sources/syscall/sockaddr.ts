// A kernel record's socket address (struct rae_sockaddr, probes/src/events.h) and IP addresses
// as text: IPv4 dotted decimal, IPv6 as RFC 5952 writes it (libsinsp's renderings of fd.*ip
// and evt.arg addresses). Consumes a DataView over the record; produces strings.
import { AF, SOCKADDR } from '../../abi/records.js';

/** A socket address; family 0 = absent. */
export interface SockAddr {
  family: number;
  port: number;
  /** Dotted IPv4 or IPv6 text; '' for AF_UNIX or absent. */
  addr: string;
}

/** The rae_sockaddr at byte `at` of `dv`. */
export function sockaddr(dv: DataView, at: number): SockAddr {
  const family = dv.getUint16(at + SOCKADDR.family, true);
  const port = dv.getUint16(at + SOCKADDR.port, true);
  const a = at + SOCKADDR.addr;
  return { family, port, addr: ipText(dv, a, family === AF.INET ? 4 : family === AF.INET6 ? 16 : 0) };
}

/** An address of `len` bytes at `a` as text: 4 dotted decimal, 16 RFC 5952; '' for any other length. */
export function ipText(dv: DataView, a: number, len: number): string {
  if (len === 4) return [0, 1, 2, 3].map((i) => dv.getUint8(a + i)).join('.');
  return len === 16 ? ipv6(dv, a) : '';
}

function ipv6(dv: DataView, a: number): string {
  const words = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => dv.getUint16(a + 2 * i, false));
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) {
    return `::ffff:${dv.getUint8(a + 12)}.${dv.getUint8(a + 13)}.${dv.getUint8(a + 14)}.${dv.getUint8(a + 15)}`;
  }
  // RFC 5952: compress the longest run of two or more zero words.
  let best = -1,
    bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = words.map((w) => w.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}
