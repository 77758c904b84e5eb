// A tiny authoritative DNS server for tests (RFC 1035 over UDP on 127.0.0.1, port 0): answers A
// and AAAA queries for the names in its table (TTL 1 s), NXDOMAIN for others, an empty answer
// for other types. The table can be changed while it runs (answers follow at once).
import { createSocket, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';
import { parseIp } from '../../host/engine/literals.js';

/** A running server: its port, the table it answers from, the queries it has had. */
export interface DnsServer {
  port: number;
  /** name (lower case) -> addresses (IPv4 and IPv6 text). */
  readonly table: Map<string, string[]>;
  queries: number;
  close(): Promise<void>;
}

/** The question's name (lower case) and the offset after QNAME; undefined for a malformed one. */
function questionName(msg: Buffer): { name: string; end: number } | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length) {
    const n = msg[at]!;
    if (n === 0) return { name: labels.join('.').toLowerCase(), end: at + 1 };
    if (n > 63 || at + 1 + n > msg.length) return undefined;
    labels.push(msg.subarray(at + 1, at + 1 + n).toString('latin1'));
    at += 1 + n;
  }
  return undefined;
}

/** The answer to one query: the question echoed, then one record per address of the asked type. */
function answer(msg: Buffer, table: ReadonlyMap<string, string[]>): Buffer | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return undefined;
  const q = questionName(msg);
  if (!q || q.end + 4 > msg.length) return undefined;
  const qtype = msg.readUInt16BE(q.end);
  const question = msg.subarray(12, q.end + 4);
  const known = table.get(q.name);
  const addrs = (known ?? []).filter((a) => (qtype === 1 ? isIPv4(a) : qtype === 28 ? isIPv6(a) : false));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(msg.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2); // QR, AA, RD echoed, NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addrs.length, 6);
  const records = addrs.map((a) => {
    const bytes = parseIp(a)!.bytes;
    const r = Buffer.alloc(12 + bytes.length);
    r.writeUInt16BE(0xc00c, 0); // the question's name
    r.writeUInt16BE(qtype, 2);
    r.writeUInt16BE(1, 4); // IN
    r.writeUInt32BE(1, 6); // TTL
    r.writeUInt16BE(bytes.length, 10);
    r.set(bytes, 12);
    return r;
  });
  return Buffer.concat([header, question, ...records]);
}

/** Starts the server on 127.0.0.1, a port the kernel picks. */
export async function startDnsServer(entries: Record<string, string[]>): Promise<DnsServer> {
  const socket: Socket = createSocket('udp4');
  const server: DnsServer = {
    port: 0,
    table: new Map(Object.entries(entries).map(([k, v]) => [k.toLowerCase(), v])),
    queries: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, from) => {
    server.queries++;
    const reply = answer(msg, server.table);
    if (reply) socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  server.port = socket.address().port;
  return server;
}
