// bind(2) and listen(2) on real kernel records, the C translator against the TypeScript oracle:
// perl binds a TCP socket to 127.0.0.1 port 0 (the kernel picks the port), listens, and prints
// the port. libsinsp makes a bound socket a server socket (parsers.cpp parse_bind_exit:
// SCAP_FD_IPV4_SERVSOCK, m_ipv4serverinfo = the bound ip and port), so fd.sip/fd.sport of both
// events are 127.0.0.1 and that port; before, they were the socket's zero peer (0.0.0.0, 0). A
// rule on listeners outside loopback (`not fd.sip = 127.0.0.1`) no longer fires on it, and one
// on the listening port does.
import { execFileSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { lookupField } from '../../../host/engine/fields/index.js';
import type { FieldRef } from '../../../host/engine/ir.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/sources/syscall/abi.js';
import { compileAll } from '../../runtime/differential-helpers.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';

const gate = kernelGate('listen.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'fd.sip', 'fd.sport', 'fd.lip', 'fd.lport', 'fd.typechar'];
const ref = (name: string): FieldRef => {
  const def = lookupField('syscall', name)!;
  return { kind: 'field', def, canonical: name, type: def.type, isList: false };
};

/** Perl (perl-base Socket): a TCP socket bound to 127.0.0.1:0 and listening; prints its pid and port. */
const LISTEN_PL = [
  'use Socket;',
  'socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";',
  'bind($s, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die "bind: $!";',
  'listen($s, 1) or die "listen: $!";',
  'my ($port) = unpack_sockaddr_in(getsockname($s)); print "$$ $port\\n";',
].join(' ');

run_('listen: bind and listen have fd.sip/fd.sport of the bound address, as libsinsp\'s server socket', async () => {
  let out = '';
  const rec = recordKernel(['bind', 'listen'], () => {
    out = execFileSync('/usr/bin/perl', ['-e', LISTEN_PL], { encoding: 'utf8' });
  });
  const [pid, port] = out.trim().split(' ').map(Number) as [number, number];
  assert.ok(port > 0, out);
  const text = [
    ['listener outside loopback', 'evt.type in (bind, listen) and fd.typechar = 4 and not fd.sip = 127.0.0.1'],
    ['listener on the port', `evt.type = listen and fd.sip = 127.0.0.1 and fd.sport = ${port}`],
  ].map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: ${c}\n  output: x\n  priority: NOTICE\n`).join('');
  const loaded = loadRules([{ name: 'listen.yaml', text }]);
  assert.ok(loaded.ok);
  const m = await compileAll(loaded.ruleset.rules);
  const refs = FIELDS.map(ref);

  const pass = translatorsPass(rec, m, 'listen-test', refs);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

  const dv = new DataView(rec.buf.buffer);
  const events = new Map<string, { off: number; v: Record<string, unknown> }>();
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'listen-test' }), (off, ev) => {
    if (dv.getUint32(off + HDR.pid, true) !== pid) return;
    const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
    events.set(String(v['evt.type']), { off, v });
  });
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'listen-test' }), () => {});
  for (const type of ['bind', 'listen']) {
    const e = events.get(type);
    assert.ok(e, `perl's ${type}`);
    assert.equal(e!.v, { 'evt.type': type, 'fd.sip': '127.0.0.1', 'fd.sport': port, 'fd.lip': '127.0.0.1', 'fd.lport': port, 'fd.typechar': '4' }, type);
    assert.equal(matched.get(e!.off) ?? [], type === 'listen' ? ['listener on the port'] : [], `${type}: the rules matched (C translator)`);
  }
});

test.run();
