// bind(2) and listen(2) on real kernel records, the C translator against the TypeScript oracle:
// perl binds a TCP socket to 127.0.0.1:<port> and another to [::1]:<port6> (ports the kernel
// handed this process a moment before) and listens on both. libsinsp makes a socket bound with a
// port a server socket (parsers.cpp parse_bind_exit: SCAP_FD_IPV4_SERVSOCK/IPV6, the bound address
// and port as m_ipv4serverinfo), whose fd.sip/fd.sport are the bound end, fd.cip/cport/lip/lport/
// rip/rport have no value and fd.name is "addr:port" (libs test/events_net.ut.cpp
// net_bind_listen_accept_ipv4); listen keeps it. Before, both events had the socket's zero peer
// as the server (fd.sip 0.0.0.0, fd.sport 0): a rule on the listening port missed them and one on
// listeners outside loopback fired on them.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('listen.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'fd.name', 'fd.sip', 'fd.sport', 'fd.cip', 'fd.cport', 'fd.lip', 'fd.lport', 'fd.rip', 'fd.rport', 'fd.typechar', 'fd.l4proto'];

/** A loopback port the kernel just handed out (closed again for perl to bind). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Perl (perl-base Socket): TCP sockets bound to 127.0.0.1:ARGV[0] and [::1]:ARGV[1], listening; prints its pid. */
const LISTEN_PL = [
  'use Socket qw(:all);',
  'socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!";',
  'setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1) or die;',
  'bind($s, pack_sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "bind: $!";',
  'listen($s, 1) or die "listen: $!";',
  'socket(my $t, AF_INET6, SOCK_STREAM, 0) or die "socket6: $!";',
  'setsockopt($t, SOL_SOCKET, SO_REUSEADDR, 1) or die;',
  'bind($t, pack_sockaddr_in6($ARGV[1], inet_pton(AF_INET6, "::1"))) or die "bind6: $!";',
  'listen($t, 1) or die "listen6: $!";',
  'print "$$\\n";',
].join(' ');

run_("listen: bind and listen have the bound address as fd.sip/fd.sport and no other end, as libsinsp's server socket", async () => {
  const port = await freePort('127.0.0.1');
  const port6 = await freePort('::1');
  let pid = 0;
  const rec = recordKernel(['bind', 'listen'], () => {
    pid = Number(execFileSync('/usr/bin/perl', ['-e', LISTEN_PL, String(port), String(port6)], { encoding: 'utf8' }).trim());
  });
  assert.ok(pid > 0);
  const text = [
    ['listener on the port', `evt.type in (bind, listen) and fd.sip = 127.0.0.1 and fd.sport = ${port}`],
    ['listener on the ipv6 port', `evt.type in (bind, listen) and fd.sip = "::1" and fd.port = ${port6}`],
    ['listener outside loopback', 'evt.type in (bind, listen) and fd.typechar = 4 and not fd.snet = "127.0.0.0/8"'],
    ['listener with a client end', 'evt.type in (bind, listen) and (fd.cip exists or fd.lport exists or fd.rip exists)'],
  ]
    .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: ${c}\n  output: x\n  priority: NOTICE\n`)
    .join('');
  const loaded = loadRules([{ name: 'listen.yaml', text }]);
  assert.ok(loaded.ok);
  const m = await compileAll(loaded.ruleset.rules);
  const refs = FIELDS.map(fieldRef);

  const pass = translatorsPass(rec, m, 'listen-test', refs);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

  const dv = new DataView(rec.buf.buffer);
  const events: Array<{ off: number; v: Record<string, unknown> }> = [];
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'listen-test' }), (off, ev) => {
    if (dv.getUint32(off + HDR.pid, true) === pid) events.push({ off, v: Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)])) });
  });
  const matchedC = bytesPass(rec, m, new KernelIngest({ hostname: 'listen-test' }), () => {});
  const matchedJs = bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'listen-test' }), () => {});
  const none = { 'fd.cip': undefined, 'fd.cport': undefined, 'fd.lip': undefined, 'fd.lport': undefined, 'fd.rip': undefined, 'fd.rport': undefined, 'fd.l4proto': 'tcp' };
  assert.equal(
    events.map((e) => e.v),
    [
      { 'evt.type': 'bind', 'fd.name': `127.0.0.1:${port}`, 'fd.sip': '127.0.0.1', 'fd.sport': port, 'fd.typechar': '4', ...none },
      { 'evt.type': 'listen', 'fd.name': `127.0.0.1:${port}`, 'fd.sip': '127.0.0.1', 'fd.sport': port, 'fd.typechar': '4', ...none },
      { 'evt.type': 'bind', 'fd.name': `::1:${port6}`, 'fd.sip': '::1', 'fd.sport': port6, 'fd.typechar': '6', ...none },
      { 'evt.type': 'listen', 'fd.name': `::1:${port6}`, 'fd.sip': '::1', 'fd.sport': port6, 'fd.typechar': '6', ...none },
    ],
  );
  for (const [i, e] of events.entries()) {
    const want = [i < 2 ? 'listener on the port' : 'listener on the ipv6 port'];
    assert.equal(matchedC.get(e.off) ?? [], want, `${e.v['evt.type']} ${i}: the rules matched (C translator)`);
    assert.equal(matchedJs.get(e.off) ?? [], want, `${e.v['evt.type']} ${i}: the rules matched (oracle)`);
  }
});

test.run();
