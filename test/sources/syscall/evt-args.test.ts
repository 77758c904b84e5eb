// evt.args on real kernel records, as libsinsp prints it in the built-in rules' outputs ('Packet
// socket created in container': socket; the sandbox's 'Modify binary dirs': rename and remove
// calls): perl makes the calls by number (x86-64) in a temporary directory, relative and
// absolute paths, a failing one, a packet socket; each event's evt.args is the exit event's
// parameters as `name=value(resolved)` (sinsp_filtercheck_event.cpp TYPE_ARGS, event.cpp
// get_param_as_str), and an alert prints it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { HDR } from '../../../host/abi/records.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { alertFor } from '../../../host/output/from-match.js';
import { compileAll } from '../../../support/differential.js';
import { fieldRef } from '../../helpers/field-ref.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, twin } from './recording.js';

const gate = kernelGate('evt-args.test.ts');
const run_ = gate.run ? test : test.skip;

const TYPES = ['socket', 'rename', 'renameat2', 'rmdir', 'unlink', 'unlinkat'];

/** Perl, in the directory ARGV[0]: prints its pid and the packet socket's fd, then renames and removes by syscall number. */
const CALLS_PL = [
  '$| = 1; chdir $ARGV[0] or die;',
  'open(my $f, ">", "a") or die; close $f; mkdir "d" or die; mkdir "d2" or die;',
  'my $fd = syscall(41, 17, 3, 768); $fd >= 0 or die "socket: $!";', // socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))
  'print "$$ $fd\\n";',
  // syscall() passes strings as pointers to writable scalars
  'my ($a, $b, $c, $nope, $d, $d2) = ("a", "b", "c", "nope", "$ARGV[0]/d", "d2");',
  'syscall(82, $a, $b) == 0 or die "rename: $!";', // rename, relative paths
  'syscall(316, -100, $b, -100, $c, 1) == 0 or die "renameat2: $!";', // renameat2(AT_FDCWD, ..., RENAME_NOREPLACE)
  'syscall(87, $c) == 0 or die "unlink: $!";',
  'syscall(87, $nope) == -1 or die;', // ENOENT
  'syscall(84, $d) == 0 or die "rmdir: $!";', // an absolute path
  'syscall(263, -100, $d2, 0x200) == 0 or die "unlinkat: $!";', // unlinkat(AT_FDCWD, "d2", AT_REMOVEDIR)
].join(' ');

run_('evt.args: socket, rename, renameat2, unlink, rmdir and unlinkat print their exit parameters as libsinsp does', async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rae-evt-args-')));
  try {
    let out = '';
    const rec = recordKernel(TYPES, () => {
      out = execFileSync('/usr/bin/perl', ['-e', CALLS_PL, dir], { encoding: 'utf8' });
    });
    const [pid, fd] = out.trim().split(' ').map(Number);
    const text = ['- rule: args', '  desc: d', `  condition: evt.type in (${TYPES.join(', ')})`, '  output: args=%evt.args', '  priority: NOTICE'].join('\n');
    const loaded = loadRules([{ name: 'r.yaml', text }], { suggestedOutput: false });
    assert.ok(loaded.ok, JSON.stringify(loaded.diagnostics));
    const m = await compileAll(loaded.ruleset.rules);
    const dv = new DataView(rec.buf.buffer);
    const seen: string[] = [];
    const alerts: string[] = [];
    bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'evt-args' }), (off, ev) => {
      if (dv.getUint32(off + HDR.pid, true) !== pid) return;
      seen.push(`${String(ev.field(fieldRef('evt.type')))} ${String(ev.field(fieldRef('evt.args')))}`);
      const a = alertFor(loaded.ruleset.rules[0]!, { source: 'syscall', timeNs: 0n, evtType: String(ev.field(fieldRef('evt.type'))), fields: ev }, 'evt-args');
      alerts.push(`${a.message} | ${JSON.stringify(a.outputFields)}`);
    });
    assert.equal(seen, [
      `socket fd=${fd}(<o>) domain=17(AF_PACKET) type=3 proto=768`,
      `rename res=0 oldpath=a(${dir}/a) newpath=b(${dir}/b)`,
      `renameat2 res=0 olddirfd=-100(AT_FDCWD) oldpath=b(${dir}/b) newdirfd=-100(AT_FDCWD) newpath=c(${dir}/c) flags=1(RENAME_NOREPLACE)`,
      `unlink res=0 path=c(${dir}/c)`,
      `unlink res=-2(ENOENT) path=nope(${dir}/nope)`,
      `rmdir res=0 path=${dir}/d`,
      `unlinkat res=0 dirfd=-100(AT_FDCWD) name=d2(${dir}/d2) flags=512(AT_REMOVEDIR)`,
    ]);
    // the alert: its message and output_fields
    assert.is(alerts[0], `args=fd=${fd}(<o>) domain=17(AF_PACKET) type=3 proto=768 | {"evt.args":"fd=${fd}(<o>) domain=17(AF_PACKET) type=3 proto=768"}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
