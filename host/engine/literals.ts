// Right-hand literal conversion to a field's type, as libsinsp's value_parser does
// (reference/falco-language.md A.7): decimal-only integers truncated to the field width,
// integer-only doubles, `true`/`false` booleans, IPv4/IPv6 addresses and CIDR networks, port
// numbers or service names, hex strings for bcontains/bstartswith.
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import type { PtType } from './fields.js';
import type { IpAddr, IpNet, Literal } from './ir.js';
import { encodeRaw } from './raw-text.js';

const INT_BITS: Partial<Record<PtType, { bits: number; signed: boolean }>> = {
  PT_INT8: { bits: 8, signed: true },
  PT_INT16: { bits: 16, signed: true },
  PT_INT32: { bits: 32, signed: true },
  PT_INT64: { bits: 64, signed: true },
  PT_ERRNO: { bits: 64, signed: true },
  PT_PID: { bits: 64, signed: true },
  PT_FD: { bits: 64, signed: true },
  PT_UINT8: { bits: 8, signed: false },
  PT_UINT16: { bits: 16, signed: false },
  PT_UINT32: { bits: 32, signed: false },
  PT_UINT64: { bits: 64, signed: false },
  PT_PORT: { bits: 16, signed: false },
  PT_RELTIME: { bits: 64, signed: false },
  PT_ABSTIME: { bits: 64, signed: false },
  PT_MODE: { bits: 32, signed: false },
  PT_FLAGS8: { bits: 8, signed: false },
  PT_FLAGS16: { bits: 16, signed: false },
  PT_FLAGS32: { bits: 32, signed: false },
  PT_ENUMFLAGS8: { bits: 8, signed: false },
  PT_ENUMFLAGS16: { bits: 16, signed: false },
  PT_ENUMFLAGS32: { bits: 32, signed: false },
  PT_UID: { bits: 32, signed: false },
  PT_GID: { bits: 32, signed: false },
  PT_SIGTYPE: { bits: 8, signed: false },
  PT_SYSCALLID: { bits: 16, signed: false },
};

/** Truncates an integer to a type's width, as a C assignment would. */
export function truncInt(v: bigint, t: PtType): bigint {
  const info = INT_BITS[t];
  if (!info) return v;
  return info.signed ? BigInt.asIntN(info.bits, v) : BigInt.asUintN(info.bits, v);
}

let services: Map<string, number> | undefined;

/** The port of a service name from /etc/services (getservbyname), if known. */
function servicePort(name: string): number | undefined {
  if (!services) {
    services = new Map();
    try {
      for (const line of readFileSync('/etc/services', 'utf8').split('\n')) {
        const m = /^([^#\s]+)\s+(\d+)\/(tcp|udp)(.*)$/.exec(line);
        if (!m) continue;
        const port = Number(m[2]);
        const aliases = m[4]!.split('#')[0]!.trim().split(/\s+/).filter(Boolean);
        for (const n of [m[1]!, ...aliases]) if (!services.has(n)) services.set(n, port);
      }
    } catch {
      // no services database: only numeric ports are accepted
    }
  }
  return services.get(name);
}

/** Parses an IPv4 or IPv6 address to bytes. */
export function parseIp(text: string): IpAddr | undefined {
  if (text.includes('.') && isIPv4(text)) return { bytes: Uint8Array.from(text.split('.').map(Number)) };
  if (!isIPv6(text)) return undefined;
  let s = text;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let tail: number[] = [];
  if (v4) {
    tail = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + '0:0';
  }
  const [head, rest] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const r = rest !== undefined && rest !== '' ? rest.split(':') : [];
  const groups = rest === undefined ? h : [...h, ...Array(8 - h.length - r.length).fill('0'), ...r];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  if (v4) bytes.set(tail, 12);
  return { bytes };
}

/** Parses `a.b.c.d/len` or an IPv6 CIDR. */
function parseNet(text: string): IpNet | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^\d+$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > ip.bytes.length * 8) return undefined;
  return { bytes: ip.bytes, prefix };
}

/** Decodes an even-length hex string. */
function parseHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Converts a literal for a field type; an error message when it does not fit. */
export function convertLiteral(text: string, type: PtType, forBytesOp: boolean): { ok: true; lit: Literal } | { ok: false; message: string } {
  if (forBytesOp) {
    const bytes = parseHex(text);
    return bytes ? { ok: true, lit: { text, bytes } } : { ok: false, message: 'bcontains and bstartswith operator support hex strings only' };
  }
  const int = INT_BITS[type];
  if (int) {
    if (/^\s*[+-]?\d+$/.test(text)) return { ok: true, lit: { text, num: truncInt(BigInt(text.trim()), type) } };
    if (type === 'PT_PORT') {
      const p = servicePort(text);
      if (p !== undefined) return { ok: true, lit: { text, num: BigInt(p) } };
    }
    return { ok: false, message: `${text} is not a valid number` };
  }
  switch (type) {
    case 'PT_DOUBLE':
      if (/^\s*[+-]?\d+$/.test(text)) return { ok: true, lit: { text, dbl: Number(text) } };
      return { ok: false, message: `${text} is not a valid number` };
    case 'PT_BOOL':
      if (text === 'true' || text === 'false') return { ok: true, lit: { text, bool: text === 'true' } };
      return { ok: false, message: `${text} is not a valid boolean` };
    case 'PT_IPADDR': {
      const ip = parseIp(text);
      return ip ? { ok: true, lit: { text, ip } } : { ok: false, message: `${text} is not a valid IP address` };
    }
    case 'PT_IPNET': {
      const net = parseNet(text);
      return net ? { ok: true, lit: { text, net } } : { ok: false, message: `${text} is not a valid IP network` };
    }
    case 'PT_BYTEBUF':
      return { ok: true, lit: { text, bytes: encodeRaw(text) } }; // `"\x90"` is the byte 0x90
    default:
      if (text.includes('\0')) return { ok: false, message: 'filter value cannot contain a NUL byte (\\x00)' };
      return { ok: true, lit: { text } };
  }
}
