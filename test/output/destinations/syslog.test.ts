// The syslog output against a real rsyslogd (Debian's rsyslog, run in the foreground with a
// private config: imtcp + imudp on a loopback port, omfile into its temp dir): the message
// rsyslog parsed (PRI, HOSTNAME, TAG, MSG) and the raw frame it received, over TCP with the JSON
// payload and over UDP with the CEF line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readServerFile, startRsyslog, waitFor } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, sampleOutputPrefix, startWithOutput } from './sample.js';

interface Logged {
  pri: string;
  host: string;
  tag: string;
  proto: string;
  msg: string;
  raw: string;
}

function logged(text: string): Logged[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const m = /^pri=(\d+) host=(\S+) tag=(\S+) proto=(\S+) msg=(.*) raw=(.*)$/.exec(l);
      if (!m) throw new Error(`unexpected rsyslog line: ${l}`);
      return { pri: m[1], host: m[2], tag: m[3], proto: m[4], msg: (m[5] as string).trim(), raw: m[6] } as Logged;
    });
}

const FRAME = new RegExp(`^<2>\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(Z|[+-]\\d{2}:\\d{2}) node-test-1 falco\\[${process.pid}\\]: `);

test('TCP, format json: rsyslog parses PRI (kern.crit), hostname, tag falco[pid] and the payload JSON', async () => {
  const server = await startRsyslog();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('syslog', { host: '127.0.0.1', port: String(server.port) }));
    fwd.fwd.submit(SAMPLE);
    fwd.fwd.submit({ ...SAMPLE, priority: 'Debug', rule: 'Second' });
    await waitFor(async () => (await outcomes(fwd, 'syslog', 'ok')) === 2, 'two deliveries');
    await waitFor(() => logged(readServerFile(server, 'messages.log')).length === 2, 'rsyslog to write both');
    const [a, b] = logged(readServerFile(server, 'messages.log')) as [Logged, Logged];
    assert.equal([a.pri, a.host, a.tag, a.proto], ['2', 'node-test-1', `falco[${process.pid}]:`, 'imtcp']);
    assert.match(a.raw, FRAME);
    const p = JSON.parse(a.msg);
    assert.match(p.output, sampleOutputPrefix());
    assert.equal([p.rule, p.priority, p.output_fields['proc.name']], [SAMPLE.rule, 'Critical', 'bash']);
    assert.equal([b.pri, JSON.parse(b.msg).rule], ['7', 'Second']);
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test('UDP, format cef: one datagram per alert carrying the CEF line', async () => {
  const server = await startRsyslog();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('syslog', { host: '127.0.0.1', port: String(server.port), protocol: 'udp', format: 'cef' }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(() => logged(readServerFile(server, 'messages.log')).length === 1, 'rsyslog to write it');
    const [a] = logged(readServerFile(server, 'messages.log')) as [Logged];
    assert.equal([a.pri, a.host, a.proto], ['2', 'node-test-1', 'imudp']);
    assert.match(a.raw, FRAME);
    assert.match(a.msg, /^CEF:0\|Falcosecurity\|Falco\|1\.0\|Falco Event\|Terminal shell in container \(A&B\)\|8\|uuid=[0-9a-f-]{36} start=2025-06-06T11:18:41Z msg=/);
    assert.ok(
      a.msg.endsWith(' source=syscall hostname=node-1 outputfields=container.id:abc123 evt.time:1749208721382570000 k8s.ns.name:prod proc.name:bash proc.pid:4242 proc.tty:true user.name:root tags=container,mitre_execution,shell'),
      a.msg,
    );
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test('a protocol other than tcp/udp is refused at start with the key', async () => {
  try {
    await startWithOutput('syslog', { host: '127.0.0.1', port: '514', protocol: 'tls' });
    assert.unreachable('should have been refused');
  } catch (err) {
    assert.match((err as Error).message, /forwarder\.outputs\.syslog\.protocol/);
  }
});

test.run();
