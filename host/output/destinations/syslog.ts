// The syslog output (falcosidekick's `syslog`): each alert to `host`:`port` over `protocol` tcp
// or udp, framed as Go's log/syslog writes to a network peer (falcosidekick dials it with the
// alert's priority and tag "falco"): `<PRI>TIMESTAMP HOSTNAME falco[PID]: MSG\n`, an RFC 3164
// line whose timestamp is RFC 3339 in local time (seconds), PRI the Falco priority as a syslog
// severity with facility 0 (kern). MSG is falcosidekick's payload JSON (format json) or its CEF
// line (format cef). TCP frames end with LF (non-transparent framing); UDP sends one datagram
// per alert. Unlike falcosidekick, which dials per alert, one socket is kept and redialled
// after the peer closes it.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { prioritySeverity, type Priority } from '../../engine/priority.js';
import { alertText, sortedTags, type Alert } from '../alert.js';
import { compareCodePoints } from '../json-write.js';
import type { OutputSettings } from './settings.js';
import { withDeadline } from './deadline.js';
import { deliveryUuid, goRfc3339Nano, goValueText, sidekickFields, sidekickJson } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

const CEF_SEVERITY: Record<Priority, string> = { Debug: '0', Informational: '3', Notice: '4', Warning: '6', Error: '7', Critical: '8', Alert: '9', Emergency: '10' };

/** falcosidekick's CEF line of an alert (output fields in key order, where Go's map order is random). */
export function cefLine(a: Alert, uuid: string): string {
  const start = goRfc3339Nano(a.timeNs - (a.timeNs % 1_000_000_000n)); // time.RFC3339: whole seconds
  let s = `CEF:0|Falcosecurity|Falco|1.0|Falco Event|${a.rule}|${CEF_SEVERITY[a.priority]}|uuid=${uuid} start=${start} msg=${alertText(a)} source=${a.source}`;
  if (a.hostname !== '') s += ` hostname=${a.hostname}`;
  s += ' outputfields=';
  const fields = sidekickFields(a);
  for (const k of Object.keys(fields).sort(compareCodePoints)) s += `${k}:${goValueText(fields[k] ?? null)} `;
  if (a.tags.length > 0) s += `tags=${sortedTags(a.tags).join(',')}`;
  return s.endsWith(' ') ? s.slice(0, -1) : s;
}

function pad2(n: number): string {
  return String(Math.abs(n)).padStart(2, '0');
}

/** Go's time.Now().Format(time.RFC3339) in the process's time zone. */
export function localRfc3339(d: Date): string {
  const off = -d.getTimezoneOffset();
  const zone = off === 0 ? 'Z' : `${off < 0 ? '-' : '+'}${pad2(Math.trunc(off / 60))}:${pad2(off % 60)}`;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}T${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}${zone}`;
}

/** One syslog message as Go's log/syslog writes it to a network peer. */
export function syslogFrame(priority: Priority, hostname: string, msg: string, now = new Date(), pid = process.pid): string {
  return `<${prioritySeverity(priority)}>${localRfc3339(now)} ${hostname} falco[${pid}]: ${msg}${msg.endsWith('\n') ? '' : '\n'}`;
}

interface Transport {
  write(frame: string, signal: AbortSignal): Promise<string | undefined>;
  close(): void;
}

function tcpTransport(host: string, port: number, timeoutMs: number): Transport {
  let sock: Socket | undefined;
  let opening: Promise<Socket> | undefined;
  function open(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = connect({ host, port });
      s.setTimeout(timeoutMs, () => s.destroy(new Error(`no connection within ${timeoutMs} ms`)));
      const fail = (err: Error) => reject(err);
      s.once('error', fail);
      s.once('connect', () => {
        s.setTimeout(0);
        s.off('error', fail);
        s.on('error', () => s.destroy());
        s.once('close', () => {
          if (sock === s) sock = undefined;
        });
        s.on('end', () => s.destroy()); // the peer closed: redial on the next alert
        s.on('data', () => {}); // syslog peers never answer; keep the socket flowing
        resolve(s);
      });
    });
  }
  return {
    async write(frame, signal) {
      try {
        if (!sock) {
          opening ??= open().finally(() => (opening = undefined));
          sock = await opening;
        }
        const s = sock;
        return await withDeadline(new Promise<void>((resolve, reject) => s.write(frame, (err) => (err ? reject(err) : resolve()))), timeoutMs, signal);
      } catch (err) {
        const e = err as Error & { code?: string };
        return e.code ?? e.message;
      }
    },
    close: () => sock?.end(),
  };
}

function udpTransport(host: string, port: number, timeoutMs: number): Transport {
  let sock: UdpSocket | undefined;
  let lastError: string | undefined;
  function open(): Promise<UdpSocket> {
    return new Promise((resolve) => {
      const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      s.on('error', (err: Error & { code?: string }) => (lastError = err.code ?? err.message));
      s.connect(port, host, () => resolve(s));
    });
  }
  return {
    async write(frame, signal) {
      sock ??= await open();
      const s = sock;
      const why = await withDeadline(new Promise<void>((resolve, reject) => s.send(frame, (err) => (err ? reject(err) : resolve()))), timeoutMs, signal);
      // A refused datagram (ICMP port unreachable) surfaces on a later send of the connected socket.
      const refused = lastError;
      lastError = undefined;
      return why ?? refused;
    },
    close: () => sock?.close(),
  };
}

/** The syslog transport. */
export function createSyslogSender(s: OutputSettings, ctx: OutputContext): Sender {
  const protocol = s.string('protocol').toLowerCase();
  if (protocol !== 'tcp' && protocol !== 'udp') throw new Error(`forwarder.outputs.syslog.protocol: expected tcp or udp, not ${JSON.stringify(s.string('protocol'))}`);
  const format = s.string('format').toLowerCase();
  const port = Number(s.string('port'));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`forwarder.outputs.syslog.port: expected a port number, not ${JSON.stringify(s.string('port'))}`);
  const host = s.string('host');
  const timeoutMs = s.number('timeoutms');
  const transport = protocol === 'tcp' ? tcpTransport(host, port, timeoutMs) : udpTransport(host, port, timeoutMs);
  return {
    send(batch, signal) {
      const d = batch[0] as Delivery;
      const msg = format === 'cef' ? cefLine(d.alert, deliveryUuid(d)) : sidekickJson(d.alert, deliveryUuid(d));
      return transport.write(syslogFrame(d.alert.priority, ctx.hostname, msg), signal);
    },
    close: async () => transport.close(),
  };
}
