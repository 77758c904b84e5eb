// evt.is_open_exec on real kernel records, the C translator against the TypeScript oracle. In
// libsinsp it is true for an open/openat/openat2 whose flags have O_CREAT or O_TMPFILE and whose
// mode has an execute bit, and for a creat whose mode has one (sinsp_filtercheck_event.cpp
// TYPE_ISOPEN_EXEC): a file created executable, not an O_PATH or exec-style open. Perl, in a temp
// dir, creates a file 0755 and one 0644, an O_TMPFILE file 0700, a file by creat(2) 0711, then
// reopens the executable one read-only and with O_PATH. The sandbox rule "Container Drift Detected
// (open+create)"'s condition (without its container test) fires on the three executables only;
// before, evt.is_open_exec was false for every event and the rule never fired.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('open-exec.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['evt.type', 'fd.name', 'evt.arg.flags', 'evt.arg.mode', 'evt.is_open_exec'];

/** Perl (perl-base Fcntl): the opens of the header comment in directory ARGV[0]; prints its pid. */
const OPENS_PL = [
  'use Fcntl;',
  'my $d = $ARGV[0];',
  'sysopen(my $a, "$d/exec", O_WRONLY | O_CREAT, 0755) or die "exec: $!"; close $a;',
  'sysopen(my $b, "$d/plain", O_WRONLY | O_CREAT, 0644) or die "plain: $!"; close $b;',
  // O_TMPFILE (__O_TMPFILE | O_DIRECTORY, x86-64)
  'sysopen(my $c, $d, O_WRONLY | 020200000, 0700) or die "tmpfile: $!"; close $c;',
  // creat(2), x86-64 85
  'my $fd = syscall(85, "$d/creat", 0711); $fd >= 0 or die "creat: $!";',
  'sysopen(my $e, "$d/exec", O_RDONLY) or die "reopen: $!"; close $e;',
  // O_PATH (x86-64 010000000)
  'sysopen(my $f, "$d/exec", 010000000) or die "path: $!"; close $f;',
  'print "$$\\n";',
].join(' ');

run_('open-exec: evt.is_open_exec is true for a file created with an execute bit (open, O_TMPFILE, creat) and a rule on it fires, as libsinsp', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-open-exec-'));
  try {
    let pid = 0;
    const rec = recordKernel(['open', 'openat', 'openat2', 'creat'], () => {
      pid = Number(execFileSync('/usr/bin/perl', ['-e', OPENS_PL, dir], { encoding: 'utf8' }).trim());
    });
    assert.ok(pid > 0);
    const text = `- rule: created executable\n  desc: d\n  condition: evt.type in (open,openat,openat2,creat) and evt.rawres>=0 and evt.is_open_exec=true and fd.name startswith "${dir}"\n  output: x\n  priority: NOTICE\n`;
    const loaded = loadRules([{ name: 'open-exec.yaml', text }]);
    assert.ok(loaded.ok);
    const m = await compileAll(loaded.ruleset.rules);
    const refs = FIELDS.map(fieldRef);

    const pass = translatorsPass(rec, m, 'open-exec-test', refs);
    assert.equal(pass.native.filter((r, i) => r !== pass.oracle[i]).slice(0, 10), []);

    const dv = new DataView(rec.buf.buffer);
    const events: Array<{ off: number; v: Record<string, unknown> }> = [];
    bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'open-exec-test' }), (off, ev) => {
      const v = Object.fromEntries(FIELDS.map((f, j) => [f, ev.field(refs[j]!)]));
      if (dv.getUint32(off + HDR.pid, true) === pid && String(v['fd.name']).startsWith(dir)) events.push({ off, v });
    });
    const matchedC = bytesPass(rec, m, new KernelIngest({ hostname: 'open-exec-test' }), () => {});
    const matchedJs = bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'open-exec-test' }), () => {});
    assert.equal(
      events.map((e) => [e.v['evt.type'], e.v['fd.name'], e.v['evt.arg.mode'], e.v['evt.is_open_exec']]),
      [
        ['openat', `${dir}/exec`, '0755', true],
        ['openat', `${dir}/plain`, '0644', false],
        ['openat', dir, '0700', true],
        ['creat', `${dir}/creat`, '0711', true],
        ['openat', `${dir}/exec`, '0', false],
        ['openat', `${dir}/exec`, '0', false],
      ],
      JSON.stringify(events.map((e) => e.v)),
    );
    for (const e of events) {
      const want = e.v['evt.is_open_exec'] === true ? ['created executable'] : [];
      assert.equal(matchedC.get(e.off) ?? [], want, `${e.v['fd.name']} ${e.v['evt.arg.flags']}: C translator`);
      assert.equal(matchedJs.get(e.off) ?? [], want, `${e.v['fd.name']} ${e.v['evt.arg.flags']}: oracle`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
