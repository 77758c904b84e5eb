// dup(2)/dup2(2)/dup3(2) of a socket on real kernel records, the C translator against the
// TypeScript oracle: libsinsp copies the old fd's info to the new one (parsers.cpp
// parse_dup_exit), so a dup of a connected TCP socket onto stdout has fd.type ipv4 and the
// connection's fd.name; the stable rule "Redirect STDOUT/STDIN to Network Connection in
// Container" (`dup and evt.rawres in (0, 1, 2) and fd.type in ("ipv4", "ipv6")`) reads exactly
// that. Before, the probe gave a dup record no socket facts: fd.type was missing and the rule
// could never fire (found by the event generator's in-container action, busybox `nc -e`).
import { spawnSync } from 'node:child_process';
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

const gate = kernelGate('dup.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'evt.rawres', 'fd.type', 'fd.typechar', 'fd.name', 'fd.sip', 'fd.sport', 'fd.l4proto'];

/** Perl: connects to 127.0.0.1:ARGV[0], dup2s the socket onto stdout, then dup()s a pipe end; prints its pid on stderr. */
const DUP_PL = [
  'use Socket qw(:all);',
  'print STDERR "$$\\n";',
  'socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!";',
  'connect($s, pack_sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "connect: $!";',
  'open(STDOUT, ">&", $s) or die "dup2: $!";',
  'use POSIX (); pipe(my $r, my $w) or die; defined(POSIX::dup(fileno($r))) or die "dup: $!";',
].join(' ');

run_('dup: a socket duplicated onto stdout has the socket facts, and the stable redirect condition matches it; a pipe dup does not', async () => {
  const conns = new Set<import('node:net').Socket>();
  const server = createServer((c) => {
    conns.add(c);
    c.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  let pid = 0;
  let stderr = '';
  let rec: ReturnType<typeof recordKernel>;
  try {
    rec = recordKernel(['dup', 'dup2', 'dup3'], () => {
      const r = spawnSync('/usr/bin/perl', ['-e', DUP_PL, String(port)], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], timeout: 300_000 });
      stderr = r.stderr;
      pid = Number(r.stderr.split('\n')[0]);
    });
  } finally {
    for (const c of conns) c.destroy();
    server.close();
  }
  assert.ok(pid > 0, stderr);
  const text = `- rule: redirect to network\n  desc: d\n  condition: evt.type in (dup, dup2, dup3) and evt.rawres in (0, 1, 2) and fd.type in ("ipv4", "ipv6")\n  output: x\n  priority: NOTICE\n`;
  const loaded = loadRules([{ name: 'dup.yaml', text }]);
  assert.ok(loaded.ok);
  const m = await compileAll(loaded.ruleset.rules);
  const refs = FIELDS.map(fieldRef);
  const pass = translatorsPass(rec, m, 'dup-test', refs);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

  const dv = new DataView(rec.buf.buffer);
  const events: Array<{ off: number; v: Record<string, unknown> }> = [];
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'dup-test' }), (off, ev) => {
    if (dv.getUint32(off + HDR.pid, true) === pid) events.push({ off, v: Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)])) });
  });
  const matchedC = bytesPass(rec, m, new KernelIngest({ hostname: 'dup-test' }), () => {});
  const matchedJs = bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'dup-test' }), () => {});
  const onto1 = events.find((e) => e.v['evt.type'] === 'dup2' && e.v['evt.rawres'] === 1);
  assert.ok(onto1, `a dup2 onto fd 1 among ${JSON.stringify(events.map((e) => e.v))}`);
  assert.is(onto1.v['fd.type'], 'ipv4');
  assert.is(onto1.v['fd.typechar'], '4');
  assert.is(onto1.v['fd.sip'], '127.0.0.1');
  assert.is(onto1.v['fd.sport'], port);
  assert.match(String(onto1.v['fd.name']), new RegExp(`^127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${port}$`));
  assert.is(onto1.v['fd.l4proto'], 'tcp');
  assert.equal(matchedC.get(onto1.off), ['redirect to network'], 'C translator');
  assert.equal(matchedJs.get(onto1.off), ['redirect to network'], 'oracle');
  const pipeDup = events.filter((e) => e.v !== onto1.v && (e.v['evt.rawres'] as number) > 2);
  assert.ok(pipeDup.length > 0, 'the pipe dup was recorded');
  for (const e of pipeDup) {
    assert.is(e.v['fd.type'], undefined, 'a pipe is no socket');
    assert.is(matchedC.get(e.off), undefined);
  }
});

test.run();
