// The syscall byte path: kernel wire records (PROC/FORK/EXIT and SYSCALL, probes/src/events.h)
// ingested into a module's memory (thread table in the state region, eval records in the batch
// region) must be judged exactly as the reference interpreter judges the same events decoded into
// fields; the thread table survives a hot swap (state carried over) and process exits. The native
// translator's agreement with the TypeScript one: ingest-native.test.ts; the process, header and
// container facts: ingest-facts.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LoadedRule } from '../../../host/engine/index.js';
import { Interpreter } from '../../../host/engine/interpreter.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import type { RuleModule } from '../../../host/runtime/evaluator.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { encodeProcRecord } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { compileAll } from '../../../support/differential.js';
import { batch, exitRecord, proc, rules, syscallRecord } from './kernel-batch.js';

function judge(ingest: KernelIngest, m: RuleModule, all: readonly LoadedRule[], b: { bytes: Uint8Array; len: number }): { got: string[]; want: string[] } {
  const offsets = ingest.ingest(m, b.bytes, b.len);
  const r = m.evaluateRecords('syscall', offsets.length, false);
  assert.ok(r.ok);
  const ids = new Map(m.rules.map((x, i) => [x, i]));
  const got = r.ok ? r.matches.map((x) => `${x.event}:${ids.get(x.rule)}`) : [];
  const interp = new Interpreter();
  const want: string[] = [];
  offsets.forEach((off, i) => {
    const fields = ingest.fieldsOf(m, b.bytes, off, i);
    const ev = new FieldEvent(fields, { source: 'syscall', timeNs: 0n, num: BigInt(i + 1) });
    all.forEach((rule, id) => {
      if (rule.evttypes?.has(fields['evt.type'] as string) && interp.evaluate(rule.condition, ev)) want.push(`${i}:${id}`);
    });
  });
  return { got, want };
}

test('kernel ingest: eval records from kernel records agree with the interpreter on the decoded events', async () => {
  const m = await compileAll(rules);
  const ingest = new KernelIngest();
  let matched = 0;
  for (let seed = 1; seed <= 20; seed++) {
    const { got, want } = judge(ingest, m, rules, batch(seed, 2000));
    assert.equal(got, want, `seed ${seed}`);
    matched += want.length;
  }
  assert.ok(matched > 100, `only ${matched} matches`);
  assert.ok(ingest.threads.size > 0);
});

test('kernel ingest: the thread table moves with a hot swap; exits free entries', async () => {
  const a = await compileAll(rules);
  const b = await compileAll([...rules].reverse());
  const ingest = new KernelIngest();
  judge(ingest, a, rules, batch(7, 10));
  const live = ingest.threads.size;
  assert.ok(live >= 39, `${live} processes`);
  b.adoptState(a);
  // only syscalls now: process fields must come from the carried-over state
  const { got, want } = judge(ingest, b, [...rules].reverse(), batch(8, 3000, false));
  assert.equal(got, want);
  const one = new Uint8Array(512);
  const oneLen = syscallRecord(one, 0, { nr: syscallNr('openat')!, tid: 110, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/shadow' });
  const offsets = ingest.ingest(b, one, oneLen);
  const fields = ingest.fieldsOf(b, one, offsets[0]!, 0);
  assert.type(fields['proc.name'], 'string', `process fields resolved after the swap: ${JSON.stringify(fields, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  assert.type(fields['proc.pname'], 'string');
  assert.is(fields['proc.pid'], 110);
  // user and group names of the process's effective ids (pid 102 runs as uid 0, gid 0)
  const rootLen = syscallRecord(one, 0, { nr: syscallNr('openat')!, tid: 102, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts' });
  const rootFields = ingest.fieldsOf(b, one, ingest.ingest(b, one, rootLen)[0]!, 0);
  assert.is(rootFields['user.name'], 'root');
  assert.is(rootFields['group.name'], 'root');
  // a link's second path, joined with its directory, for alert output
  const linkLen = syscallRecord(one, 0, { nr: syscallNr('linkat')!, tid: 102, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/shadow', path2: 'shadow-copy', dir2: '/tmp/x' });
  const linkFields = ingest.fieldsOf(b, one, ingest.ingest(b, one, linkLen)[0]!, 0);
  assert.is(linkFields['evt.arg.oldpath'], '/etc/shadow');
  assert.is(linkFields['evt.arg.newpath'], '/tmp/x/shadow-copy');
  assert.is(linkFields['proc.is_exe_from_memfd'], false);
  assert.is(linkFields['proc.is_exe_upper_layer'], false);
  // an exit frees the process: its later syscalls have no process fields
  const exits = new Uint8Array(64);
  const len = exitRecord(exits, 0, 103);
  ingest.ingest(b, exits, len);
  assert.is(ingest.threads.entryOf(103), 0);
  assert.is(ingest.threads.size, live - 1);
  // an exec through a memfd: the probe's exepath walk gives '/', the exec path is an fd path
  const memfd = new Uint8Array(2048);
  let mlen = encodeProcRecord({ ...proc(150, 102, 'x', ['/proc/self/fd/3']), exepath: Buffer.from('/') }, memfd, 0, 1n);
  mlen += syscallRecord(memfd, mlen, { nr: syscallNr('openat')!, tid: 150, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts' });
  const mOffsets = ingest.ingest(b, memfd, mlen);
  assert.is(ingest.fieldsOf(b, memfd, mOffsets[0]!, 0)['proc.is_exe_from_memfd'], true);
});

test('kernel ingest: DetectionEngine.evaluateKernel turns kernel records into alerts; the table survives a reload', async () => {
  const alerts: Array<{ rule: string; output: string }> = [];
  const engine = new DetectionEngine({ ruleMatching: 'first', minPriority: 'Debug', kernel: new KernelIngest({ hostname: 'h' }), hostname: 'h', onAlert: (a) => alerts.push({ rule: a.rule, output: a.message }) });
  const rule = (name: string) => [
    {
      name: 'r.yaml',
      text: `- rule: ${name}\n  desc: d\n  condition: evt.type = openat and evt.is_open_read = true and fd.name = /etc/shadow and proc.pname = sshd\n  output: "%proc.name read %fd.name (parent %proc.pname, cmdline %proc.cmdline)"\n  priority: WARNING\n`,
    },
  ];
  assert.ok((await engine.load(rule('shadow A'))).swapped);
  const buf = new Uint8Array(4096);
  let off = encodeProcRecord(proc(300, 1, 'sshd', ['sshd', '-D']), buf, 0, 1n);
  off += encodeProcRecord(proc(301, 300, 'cat', ['cat', '/etc/shadow']), buf, off, 1n);
  off += syscallRecord(buf, off, { nr: syscallNr('openat')!, tid: 301, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: 'shadow', dir: '/etc' });
  assert.is(engine.evaluateKernel(buf, off, 1_700_000_000_000_000_000n), 1);
  assert.ok((await engine.load(rule('shadow B'))).swapped);
  const again = new Uint8Array(512);
  const len = syscallRecord(again, 0, { nr: syscallNr('openat')!, tid: 301, ret: 4n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/shadow' });
  assert.is(engine.evaluateKernel(again, len), 1, 'the process is known to the new module');
  assert.equal(
    alerts.map((a) => a.rule),
    ['shadow A', 'shadow B'],
  );
  assert.match(alerts[0]!.output, 'cat read /etc/shadow (parent sshd, cmdline cat /etc/shadow)');
  await engine.close();
});

test.run();
