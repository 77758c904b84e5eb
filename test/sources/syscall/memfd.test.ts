// proc.exepath of an exec from a memfd on real kernel records, the C translator against the
// TypeScript oracle: perl creates a memfd (memfd_create, x86-64 319) holding a copy of
// /bin/true and execs it through /proc/self/fd/N. libsinsp's exepath is the driver's
// trusted_exepath (parsers.cpp parse_execve_exit, "Parameter 28"), "memfd:<name>" for such a
// file, which the stable macro known_memfd_execution_processes compares with
// "memfd:runc_cloned:/proc/self/exe". So 'Fileless execution via memfd_create' fires for a memfd
// named rae-memfd-test and no longer for one named as runc names its own (before, the probe's
// walk gave "/" for both, and the rule fired for both).
import { execFileSync, spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { readProcess } from '../../../host/sources/syscall/procfs.js';
import { compileAll } from '../../../support/differential.js';
import { corpusText } from '../../../support/corpus.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('memfd.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'proc.exepath', 'proc.is_exe_from_memfd', 'proc.name', 'evt.arg.flags'];

/** Perl (perl-base): prints its pid, copies /bin/true into a memfd named ARGV[0] (no close-on-exec) and execs it. */
const MEMFD_PL = [
  '$| = 1; print "$$\\n";',
  'my $fd = syscall(319, $ARGV[0], 0); $fd >= 0 or die "memfd_create: $!";',
  'open(my $t, "<:raw", "/bin/true") or die; local $/; my $data = <$t>; close $t;',
  'syscall(1, $fd, $data, length $data) == length $data or die "write: $!";',
  'exec { "/proc/self/fd/$fd" } "true" or die "exec: $!";',
].join(' ');

run_("memfd: an exec from a memfd has proc.exepath memfd:<name> and evt.arg.flags EXE_WRITABLE|EXE_FROM_MEMFD; 'Fileless execution via memfd_create' fires, except for runc's own name", async () => {
  const names = ['rae-memfd-test', 'runc_cloned:/proc/self/exe'];
  const pids: number[] = [];
  const rec = recordKernel(['openat', 'execve', 'execveat'], () => {
    for (const n of names) pids.push(Number(execFileSync('/usr/bin/perl', ['-e', MEMFD_PL, n], { encoding: 'utf8' }).trim()));
  });
  const loaded = loadRules([{ name: 'falco_rules.yaml', text: corpusText('falco_rules.yaml') }]);
  assert.ok(loaded.ok);
  const rule = 'Fileless execution via memfd_create';
  const rules = loaded.ruleset.rules.filter((r) => r.name === rule);
  assert.is(rules.length, 1);
  const m = await compileAll(rules);
  const refs = FIELDS.map(fieldRef);

  const pass = translatorsPass(rec, m, 'memfd-test', refs);
  assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

  const dv = new DataView(rec.buf.buffer);
  const execs = new Map<number, { off: number; v: Record<string, unknown> }>();
  bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'memfd-test' }), (off, ev) => {
    const pid = dv.getUint32(off + HDR.pid, true);
    const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
    if (pids.includes(pid) && v['evt.type'] === 'execve') execs.set(pid, { off, v }); // the last: perl's own exec comes first
  });
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'memfd-test' }), () => {});
  // a condition on evt.arg.flags puts it in a slot, which the native translator fills (ingest-arg.c exec_flags)
  const flagsRule = 'exec from a memfd by its flags';
  const byFlags = loadRules([{ name: 'flags.yaml', text: `- rule: ${flagsRule}\n  desc: t\n  condition: evt.type = execve and evt.arg.flags = "EXE_WRITABLE|EXE_FROM_MEMFD"\n  output: "%evt.arg.flags"\n  priority: WARNING\n` }]);
  assert.ok(byFlags.ok);
  const mf = await compileAll(byFlags.ruleset.rules);
  const flagsPass = translatorsPass(rec, mf, 'memfd-test');
  assert.equal(flagsPass.native.filter((r, i) => r !== flagsPass.oracle[i]).slice(0, 10), []);
  const matchedByFlags = bytesPass(rec, mf, new KernelIngest({ hostname: 'memfd-test' }), () => {});
  names.forEach((n, k) => {
    const e = execs.get(pids[k]!);
    assert.ok(e, `the exec of the memfd ${n}`);
    assert.is(e!.v['proc.exepath'], `memfd:${n}`);
    assert.is(e!.v['proc.is_exe_from_memfd'], true);
    // libsinsp's execve flags (execve_flags): root may write the memfd it made (Falco's suite expects this)
    assert.is(e!.v['evt.arg.flags'], 'EXE_WRITABLE|EXE_FROM_MEMFD', `evt.arg.flags of the exec of ${n}`);
    assert.equal(matched.get(e!.off) ?? [], k === 0 ? [rule] : [], `${rule} for ${n}`);
    assert.equal(matchedByFlags.get(e!.off) ?? [], [flagsRule], `${flagsRule} for ${n} (native translator)`);
  });
});

run_('memfd: the /proc bootstrap reads a running memfd exec as the probe records it, memfd:<name>', async () => {
  // /bin/sleep copied into a memfd and exec'd as `sleep 300`; the kernel's link reads /memfd:rae-memfd-sleep (deleted)
  const child = spawn('/usr/bin/perl', ['-e', MEMFD_PL.replace('/bin/true', '/bin/sleep').replace('"true"', '"sleep", "300"'), 'rae-memfd-sleep'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const pid = await new Promise<number>((done) => child.stdout.once('data', (d: Buffer) => done(Number(d.toString().trim()))));
    const link = () => {
      try {
        return readlinkSync(`/proc/${pid}/exe`);
      } catch {
        return '';
      }
    };
    for (const until = Date.now() + 300_000; !link().startsWith('/memfd:') && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    assert.is(link(), '/memfd:rae-memfd-sleep (deleted)');
    assert.is(readProcess(pid)?.exepath.toString(), 'memfd:rae-memfd-sleep');
  } finally {
    child.kill('SIGKILL');
  }
});

test.run();
