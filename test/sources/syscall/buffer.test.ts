// evt.buffer and evt.arg.data on real kernel records. A copy of perl named `java` connects to a
// loopback TCP server of this process and receives its bytes with recvfrom(2), then writes a
// longer text with write(2) and writev(2). libsinsp gives these exit events their I/O buffer as
// the `data` parameter, its first snaplen bytes (80 by default: the modern probe's recvfrom_x,
// write_x...); a filter compares evt.buffer's raw bytes (sinsp_filtercheck_event.cpp TYPE_BUFFER:
// extract_argraw when m_is_compare) and evt.arg.data's PF_NORMAL text, which an alert also prints
// for both (binary_buffer_to_string_dots, event.cpp: a byte outside 0x20..0x7e is '.'). The
// sandbox rule "Java Process Class File Download" (`evt.buffer bcontains cafebabe` on a java
// process's recvfrom) fires on the class file's bytes and not on other bytes. The probe copies
// buffers only for the syscalls the loaded rules read them on: none for the built-in sets; a real
// `rae run -S 12` copies 12 bytes of recvfrom alone and its alert prints them.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../../host/engine/index.js';
import { alertFor } from '../../../host/output/from-match.js';
import { HDR } from '../../../host/abi/records.js';
import { dataSyscalls } from '../../../host/sources/syscall/fields.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { syscallName } from '../../../host/sources/syscall/syscalls.js';
import type { FieldEvent } from '../../../host/engine/field-event.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('buffer.test.ts');
const run_ = gate.run ? test : test.skip;

const JAVA_RULE = 'Java Process Class File Download';
/** The start of a class file: the magic cafebabe, minor 0, major 52 (Java 8), then text. */
const CLASS_BYTES = Buffer.concat([Buffer.from('cafebabe00000034', 'hex'), Buffer.from('Exploit.class')]);
const OTHER_BYTES = Buffer.from('HTTP/1.1 200 OK\r\n\r\nnot a class');
/** What the client writes: longer than the default snaplen, with a tab and a newline. */
const WRITTEN = `${'w'.repeat(70)}\tTAB\nNEWLINE${'z'.repeat(40)}`;

/** Perl: connects to 127.0.0.1:ARGV[0], receives up to 200 bytes (recvfrom), writes WRITTEN to /dev/null with write and writev; prints its pid. */
const CLIENT_PL = [
  'use Socket qw(:all);',
  'socket(my $s, AF_INET, SOCK_STREAM, 0) or die "socket: $!";',
  'connect($s, pack_sockaddr_in($ARGV[0], inet_aton("127.0.0.1"))) or die "connect: $!";',
  'defined(recv($s, my $buf, 200, MSG_WAITALL)) or die "recv: $!";',
  'open(my $null, ">", "/dev/null") or die; syswrite($null, $ARGV[1]) or die "write: $!";',
  // writev(2) of two pieces: perl has no writev; syscall(20, fd, iov, 2) with a packed iovec array
  'my ($p1, $p2) = (substr($ARGV[1], 0, 50), substr($ARGV[1], 50));',
  'my $iov = pack("QQQQ", unpack("Q", pack("p", $p1)), length($p1), unpack("Q", pack("p", $p2)), length($p2));',
  'syscall(20, fileno($null), $iov, 2) == length($ARGV[1]) or die "writev: $!";',
  'print "$$\\n";',
].join(' ');

/** Perl: a TCP server on 127.0.0.1 (a port the kernel picks, printed) sending the bytes of hex ARGV[0] to each client. */
const SERVER_PL = [
  'use Socket qw(:all); $| = 1;',
  'socket(my $s, AF_INET, SOCK_STREAM, 0) or die; bind($s, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die; listen($s, 8) or die;',
  'print((unpack_sockaddr_in(getsockname($s)))[0], "\n");',
  'while (accept(my $c, $s)) { print $c pack("H*", $ARGV[0]); close $c }',
].join(' ');

/**
 * A loopback server sending `bytes` to each client, in a child process (the clients run while
 * this process blocks in execFileSync); stopped with kill().
 */
async function server(bytes: Buffer): Promise<{ port: number; stop: () => void }> {
  const child = spawn('/usr/bin/perl', ['-e', SERVER_PL, bytes.toString('hex')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { port: Number(line), stop: () => child.kill() };
}

/** Runs the `java` client against each port (each from a child of this process), recording with the given data syscalls and snaplen; the clients' pids. */
async function record(java: string, ports: number[], data: { types?: string[]; snaplen?: number }): Promise<{ rec: Recording; pids: number[] }> {
  const pids: number[] = [];
  // the clients run while the probe records: execFileSync blocks this process, so the servers answer from a child
  const rec = recordKernel(
    ['recvfrom', 'write', 'writev'],
    () => {
      for (const port of ports) pids.push(Number(execFileSync(java, ['-e', CLIENT_PL, String(port), WRITTEN], { encoding: 'utf8' }).trim()));
    },
    32,
    new Set(),
    data,
  );
  return { rec, pids };
}

const FIELDS = ['evt.type', 'proc.name', 'fd.type', 'evt.buffer', 'evt.arg.data'];

/** The sandbox rule (enabled) and rules on the buffer's bytes and its text, over the stable macros. */
function rules(): LoadedRule[] {
  const extra = [
    `- rule: ${JAVA_RULE}\n  enabled: true\n  override:\n    enabled: replace\n`,
    ...[
      ['class magic at the start', 'evt.type = recvfrom and evt.buffer bstartswith cafebabe', 'buf=%evt.buffer data=%evt.arg.data'],
      ['text of the class', 'evt.type = recvfrom and evt.arg.data contains "4Exploit.class"'],
      ['dots of the magic', 'evt.type = recvfrom and evt.arg.data startswith "......."'],
      ['eight dots', 'evt.type = recvfrom and evt.arg.data startswith "........"'],
      ['raw magic as text', 'evt.type = recvfrom and evt.arg.data contains "\\xca"'],
      ['written text', 'evt.type in (write, writev) and evt.buffer contains "TAB" and proc.name = java'],
    ].map(([n, c, o]) => `- rule: ${n}\n  desc: d\n  condition: ${c}\n  output: ${o ?? 'x'}\n  priority: NOTICE\n`),
  ].join('');
  const loaded = loadRules([
    { name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') },
    { name: 'falco-sandbox_rules.yaml', text: readFileSync('rules/syscall-sandbox/falco-sandbox_rules.yaml', 'utf8') },
    { name: 'buffer.yaml', text: extra },
  ]);
  assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
  const names = new Set([JAVA_RULE, 'class magic at the start', 'text of the class', 'dots of the magic', 'eight dots', 'raw magic as text', 'written text']);
  return loaded.ruleset.rules.filter((r) => names.has(r.name));
}

/** The clients' events: record offset, FIELDS as alerts read them, and the alert messages of `alertRules` for each. */
function clientEvents(rec: Recording, pids: number[], m: Parameters<typeof bytesPass>[1], ki: KernelIngest, alertRules: LoadedRule[] = []) {
  const dv = new DataView(rec.buf.buffer);
  const refs = FIELDS.map(fieldRef);
  const events: Array<{ pid: number; off: number; v: Record<string, unknown>; alerts: string[] }> = [];
  const matched = bytesPass(rec, m, ki, (off, ev: FieldEvent) => {
    const pid = dv.getUint32(off + HDR.pid, true);
    if (pids.includes(pid)) events.push({ pid, off, v: Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)])), alerts: alertRules.map((r) => alertFor(r, { source: 'syscall', timeNs: 0n, fields: ev }, 'h').message) });
  });
  return { events, matched };
}

const dots = (b: Buffer) => b.toString('latin1').replace(/[^\x20-\x7e]/g, '.');

run_('buffer: recvfrom/write/writev carry their I/O buffer; evt.buffer compares bytes, evt.arg.data text; the class-file rule fires on cafebabe only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-buffer-'));
  const a = await server(CLASS_BYTES);
  const b = await server(OTHER_BYTES);
  try {
    const java = join(dir, 'java');
    copyFileSync('/usr/bin/perl', java);
    const loaded = rules();
    // what rae run asks of the probe for these rules: the buffers of recvfrom, write and writev only
    assert.equal([...dataSyscalls(loaded)].sort(), ['recvfrom', 'write', 'writev']);
    const javaRule = loaded.find((r) => r.name === JAVA_RULE)!;
    const m = await compileAll(loaded);

    const { rec, pids } = await record(java, [a.port, b.port], { types: ['recvfrom', 'write', 'writev'] });
    assert.is(pids.length, 2);
    // the C translator writes every slot as the TypeScript oracle, and both render alike
    const pass = translatorsPass(rec, m, 'h', FIELDS.map(fieldRef));
    assert.ok(pass.slots.includes('evt.buffer') && pass.slots.includes('evt.arg.data'), pass.slots.join(' '));
    assert.equal(
      pass.native.filter((r, i) => r !== pass.oracle[i]),
      [],
    );
    for (const [name, ki, mod] of [
      ['C', new KernelIngest({ hostname: 'h' }), m],
      ['oracle', new KernelIngest({ native: false, hostname: 'h' }), twin(m)],
    ] as const) {
      const magicRule = loaded.find((r) => r.name === 'class magic at the start')!;
      const { events, matched } = clientEvents(rec, pids, mod, ki, [javaRule, magicRule]);
      // the client's own writes (perl writes other things too: its pid to stdout...)
      const of = (pid: number, type: string) => events.filter((e) => e.pid === pid && e.v['evt.type'] === type && (type === 'recvfrom' || String(e.v['evt.arg.data']).startsWith('w')));
      const [classRecv] = of(pids[0]!, 'recvfrom');
      const [otherRecv] = of(pids[1]!, 'recvfrom');
      assert.ok(classRecv && otherRecv, `${name}: a recvfrom of each client (${events.map((e) => e.v['evt.type']).join(' ')})`);
      // alerts print the buffer as libsinsp does: one character per byte, '.' outside 0x20..0x7e
      assert.equal(classRecv.v, { 'evt.type': 'recvfrom', 'proc.name': 'java', 'fd.type': 'ipv4', 'evt.buffer': dots(CLASS_BYTES), 'evt.arg.data': dots(CLASS_BYTES) }, name);
      assert.is(dots(CLASS_BYTES), '.......4Exploit.class');
      assert.equal(otherRecv.v, { 'evt.type': 'recvfrom', 'proc.name': 'java', 'fd.type': 'ipv4', 'evt.buffer': dots(OTHER_BYTES), 'evt.arg.data': dots(OTHER_BYTES) }, name);
      // the rules: the sandbox rule and bstartswith on the class bytes only, contains and startswith on the
      // text (its 7 dots, not 8); the byte 0xca is no text of the rendering
      assert.equal((matched.get(classRecv.off) ?? []).sort(), [JAVA_RULE, 'class magic at the start', 'dots of the magic', 'text of the class'].sort(), `${name}: class bytes`);
      assert.equal(matched.get(otherRecv.off) ?? [], [], `${name}: other bytes`);
      assert.match(classRecv.alerts[0]!, /^Java process class file download \| server_ip=127\.0\.0\.1 server_port=\d+ .*process=java /);
      assert.ok(classRecv.alerts[1]!.startsWith('buf=.......4Exploit.class data=.......4Exploit.class '), classRecv.alerts[1]);
      // write and writev: the first 80 bytes of what was written (writev's two pieces joined)
      for (const pid of pids) {
        for (const type of ['write', 'writev']) {
          const [w] = of(pid, type);
          assert.ok(w, `${name}: the ${type} of ${pid}`);
          assert.equal(w.v['evt.buffer'], dots(Buffer.from(WRITTEN.slice(0, 80))), `${name}: ${type}`);
          assert.equal(w.v['evt.arg.data'], `${'w'.repeat(70)}.TAB.NEWLI`);
          assert.equal(matched.get(w.off) ?? [], ['written text'], `${name}: ${type} rules`);
        }
      }
    }
  } finally {
    a.stop();
    b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

run_('buffer: the snaplen bounds the bytes recorded; syscalls not marked for data carry none, and the rules on it stay silent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-buffer-'));
  const a = await server(CLASS_BYTES);
  try {
    const java = join(dir, 'java');
    copyFileSync('/usr/bin/perl', java);
    const loaded = rules();
    const m = await compileAll(loaded);
    // snaplen 4: the magic alone, and 4 bytes of each write
    const short = await record(java, [a.port], { types: ['recvfrom', 'write', 'writev'], snaplen: 4 });
    const s = clientEvents(short.rec, short.pids, m, new KernelIngest({ hostname: 'h' }));
    assert.equal(
      s.events.filter((e) => e.v['evt.type'] === 'recvfrom' || String(e.v['evt.arg.data']).startsWith('w')).map((e) => [e.v['evt.type'], e.v['evt.arg.data']]),
      [
        ['recvfrom', '....'],
        ['write', 'wwww'],
        ['writev', 'wwww'],
      ],
    );
    const recv = s.events.find((e) => e.v['evt.type'] === 'recvfrom')!;
    assert.equal(s.matched.get(recv.off)?.sort(), [JAVA_RULE, 'class magic at the start'].sort());
    // no syscall marked: the records carry no buffer (as rae run asks when no rule reads one)
    const none = await record(java, [a.port], {});
    const n = clientEvents(none.rec, none.pids, m, new KernelIngest({ hostname: 'h' }));
    assert.equal([...new Set(n.events.map((e) => e.v['evt.type']))].sort(), ['recvfrom', 'write', 'writev']);
    assert.equal(
      n.events.filter((e) => e.v['evt.buffer'] !== undefined || e.v['evt.arg.data'] !== undefined),
      [],
    );
    assert.equal([...n.matched.values()], []);
  } finally {
    a.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

run_('buffer: rae run -S 12 with a rule reading evt.buffer on recvfrom: the probe copies 12 bytes of recvfrom only, and the alert prints them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-buffer-'));
  const a = await server(CLASS_BYTES);
  let rae: RaeRun | undefined;
  try {
    const java = join(dir, 'java');
    copyFileSync('/usr/bin/perl', java);
    const cfg = join(dir, 'config.yaml');
    writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  enabled: false\n');
    const rulesFile = join(dir, 'rules.yaml');
    writeFileSync(rulesFile, '- rule: class bytes received\n  desc: d\n  condition: evt.type = recvfrom and evt.buffer bcontains cafebabe and proc.name = java\n  output: got %evt.buffer (%evt.arg.data)\n  priority: WARNING\n');
    rae = startRae(['--config', cfg, '--state-dir', join(dir, 'state'), '-o', 'rules.builtIn=[]', '-r', rulesFile, '-S', '12']);
    await rae.waitLog(/syscall: capturing \d+ syscalls the rules need \(socket recvfrom\); their I\/O buffers \(snaplen 12 bytes\) for recvfrom\n/, 0, 300_000);
    await rae.waitLog(/run: ready/, 0, 300_000);
    execFileSync(java, ['-e', CLIENT_PL, String(a.port), WRITTEN]);
    const mine = (as: RaeRun['alerts']) => as.filter((x) => x.rule === 'class bytes received');
    await rae.waitAlerts((as) => mine(as).length > 0, 'the class bytes alert', 60_000);
    const fields = mine(rae.alerts)[0]!.output_fields;
    assert.equal([fields['evt.buffer'], fields['evt.arg.data']], ['.......4Expl', '.......4Expl']);
  } finally {
    await rae?.stop();
    a.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('buffer: the built-in rule sets read no I/O buffer, so the probe copies none; one rule reading it asks for its syscalls only', () => {
  for (const [set, file] of [
    ['syscall', 'rules/syscall/falco_rules.yaml'],
    ['syscall-incubating', 'rules/syscall-incubating/falco-incubating_rules.yaml'],
  ]) {
    const loaded = loadRules([{ name: 'falco_rules.yaml', text: readFileSync('rules/syscall/falco_rules.yaml', 'utf8') }, ...(file === 'rules/syscall/falco_rules.yaml' ? [] : [{ name: file, text: readFileSync(file, 'utf8') }])]);
    assert.equal([...dataSyscalls(loaded.ruleset.rules)], [], set);
  }
  const one = (condition: string, output = 'x') => [...dataSyscalls(loadRules([{ name: 'r.yaml', text: `- rule: r\n  desc: d\n  condition: ${condition}\n  output: ${output}\n  priority: NOTICE\n` }]).ruleset.rules)].sort();
  assert.equal(one('evt.type in (read, open) and evt.buffer contains x'), ['read']);
  assert.equal(one('evt.type = sendto', 'data=%evt.arg.data'), ['sendto']);
  assert.equal(one('evt.type in (sendto, recvmsg) and fd.num = 3'), []);
  assert.equal(syscallName(45), 'recvfrom');
});

test.run();
