// The evt.arg.* parameters on real kernel records, the C translator against the oracle: harmless
// commands in a temporary directory (chmod u+s / g+s, fchmod, mkdir, rename, link, unlink, rmdir,
// a setuid to the caller's own uid, a bpf(BPF_PROG_LOAD) call that fails on a null attribute,
// ptrace calls that fail, symlink/symlinkat, mkdirat/symlinkat on a directory fd) are captured, and
// every evt.arg.* field (name, path, filename, oldpath, newpath, mode, fd, uid, cmd, flags, target,
// pid, dirfd, res, linkpath, request) must be written to the same eval record slot with the same
// value by probes/addon/ingest.c as by the TypeScript oracle (ingest.ts), and render through the
// oracle's fieldsOf (the byte path's matched events) with libsinsp's values for the calls made here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { HDR } from '../../../host/abi/records.js';
import { syscallName } from '../../../host/sources/syscall/syscalls.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import { corpusText } from '../../../support/corpus.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('args.test.ts');
const run_ = gate.run ? test : test.skip;

const ARGS = ['name', 'path', 'filename', 'oldpath', 'newpath', 'mode', 'fd', 'uid', 'cmd', 'flags', 'target', 'pid', 'dirfd', 'res', 'linkpath', 'request'];
const TYPES = ['chmod', 'fchmod', 'fchmodat', 'fchmodat2', 'mkdir', 'mkdirat', 'rmdir', 'unlink', 'unlinkat', 'rename', 'renameat', 'renameat2', 'link', 'linkat', 'setuid', 'bpf', 'ptrace', 'symlink', 'symlinkat'];
/** A pid above PID_MAX_LIMIT (4194304): no process has it, ptrace fails with ESRCH. */
const NO_PID = 4194309;

// one Python process per step: setuid to its own uid, bpf(BPF_PROG_LOAD, NULL, 0), fchmod
const PY = [
  'import ctypes, os',
  'os.setuid(os.getuid())',
  'ctypes.CDLL(None, use_errno=True).syscall(321, 5, 0, 0)',
  "fd = os.open('p', os.O_WRONLY | os.O_CREAT, 0o640)",
  'os.fchmod(fd, 0o4750)',
  'os.close(fd)',
  // ptrace calls that fail and change nothing: PEEKDATA of a pid that cannot exist, ATTACH to itself (EPERM)
  `ctypes.CDLL(None, use_errno=True).syscall(101, 2, ${NO_PID}, 0, 0)`,
  'ctypes.CDLL(None, use_errno=True).syscall(101, 16, os.getpid(), 0, 0)',
  // symlink(2) with a relative link path, and *at calls with a real directory fd: mkdirat, symlinkat, a failing mkdirat
  "os.symlink('/etc/hostname', 'sl2')",
  "os.mkdir('sub')",
  "dfd = os.open('sub', os.O_RDONLY | os.O_DIRECTORY)",
  "os.mkdir('m2', dir_fd=dfd)",
  "os.symlink('tgt', 'sl3', dir_fd=dfd)",
  'try: os.mkdir("m2", dir_fd=dfd)\nexcept FileExistsError: pass',
  'os.close(dfd)',
].join('\n');

run_("args: the C translator writes evt.arg.* as the oracle does, with libsinsp's values, for real chmod/mkdir/rename/link/unlink/setuid/bpf/ptrace/symlink calls", async () => {
  const rules = loadRules(['falco_rules.yaml', 'falco-incubating_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) }))).ruleset.rules;
  const refs = ARGS.map((a) => fieldRef(`evt.arg.${a}`));
  // a rule reading every parameter, so each has a slot the translators fill (fchmodat2 is no event type of the rules language)
  const argRule = loadRules([
    {
      name: 'args.yaml',
      text: `- rule: every evt.arg\n  desc: d\n  condition: evt.type in (${TYPES.filter((t) => t !== 'fchmodat2').join(', ')}) and (${ARGS.map((a) => `evt.arg.${a} exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n`,
    },
  ]).ruleset.rules;
  assert.is(argRule.length, 1);
  const m = await compileAll([...rules, ...argRule]);
  const dir = mkdtempSync(join(tmpdir(), 'rae-args-'));
  let rec: Recording;
  try {
    // relative paths (resolved against the cwd the probe records) and absolute ones
    rec = recordKernel(TYPES, () =>
      execFileSync(
        '/bin/bash',
        [
          '-c',
          [
            'set -e',
            `cd ${dir}`,
            'touch f .bash_history',
            'chmod 644 f',
            'chmod u+s f',
            `chmod g+s ${dir}/f`,
            'mkdir d',
            `mkdir ${dir}/d/e`,
            'mv f g',
            'perl -e \'rename("g", "d/../g2") or die; link("g2", "h") or die; unlink("h") or die; mkdir("m", 0750) or die; rmdir("m") or die\'',
            'ln g2 d/l',
            `rm ${dir}/d/l .bash_history`,
            'rmdir d/e',
            'ln -s /etc/hostname lnk',
            `python3 -c "${PY.replace(/"/g, '\\"')}"`,
          ].join('\n'),
        ],
        { stdio: 'ignore' },
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const { buf, fill } = rec;
  const pass = translatorsPass(rec, m, 'h', refs);
  assert.ok(
    ARGS.every((a) => pass.slots.includes(`evt.arg.${a}`)),
    pass.slots.join(' '),
  );
  const diffs = pass.native.flatMap((r, i) => (r === pass.oracle[i] ? [] : [`native ${r}\noracle ${pass.oracle[i]}`]));
  assert.is(pass.native.length, pass.oracle.length);
  // the oracle's rendered values of each event (its fieldsOf, as alerts print them)
  const dv = new DataView(buf.buffer);
  const ki = new KernelIngest({ native: false });
  const mo = twin(m);
  const offsets = ki.ingest(mo, buf, fill);
  const seen = new Map<string, Array<Record<string, unknown>>>();
  offsets.forEach((off, i) => {
    const type = syscallName(dv.getUint16(off + HDR.nr, true));
    const bytes = new FieldEvent(ki.fieldsOf(mo, buf, off, i), { source: 'syscall', timeNs: 0n, num: 1n });
    const values: Record<string, unknown> = {};
    for (const ref of refs) {
      const b = bytes.field(ref);
      if (b !== undefined) values[ref.arg!] = b;
    }
    // only this test's calls (paths under the temporary directory, this uid's setuid, the bpf call, fchmod)
    const mine = Object.values(values).some((v) => typeof v === 'string' && v.startsWith(dir)) || type === 'setuid' || type === 'bpf' || type === 'fchmod' || type === 'ptrace';
    if (mine) seen.set(type, [...(seen.get(type) ?? []), values]);
  });
  assert.equal(diffs.slice(0, 5), []);
  const all = [...seen.values()].flat();
  const has = (w: Record<string, unknown>) => all.some((v) => Object.entries(w).every(([k, x]) => v[k] === x));
  const say = (what: string) => `${what} not seen in ${JSON.stringify(Object.fromEntries(seen))}`;
  // chmod u+s / g+s (coreutils: fchmodat), fchmod on an fd, mkdir, rename/link/unlink/rmdir
  assert.ok(has({ filename: join(dir, 'f'), mode: 'S_IROTH|S_IRGRP|S_IWUSR|S_IRUSR|S_ISUID' }), say('chmod u+s'));
  assert.ok(has({ filename: join(dir, 'f'), mode: 'S_IROTH|S_IRGRP|S_IWUSR|S_IRUSR|S_ISGID|S_ISUID' }), say('chmod g+s'));
  assert.ok(
    all.some((v) => v.mode === 'S_IXGRP|S_IRGRP|S_IXUSR|S_IWUSR|S_IRUSR|S_ISUID' && /^\d+$/.test(String(v.fd))),
    say('fchmod'),
  );
  assert.ok(has({ path: join(dir, 'd') }) && has({ path: join(dir, 'd', 'e') }), say('mkdir d, d/e'));
  assert.ok(has({ path: join(dir, 'm'), mode: '1E8' }), say('mkdir m 0750'));
  assert.ok(has({ oldpath: join(dir, 'f'), newpath: join(dir, 'g') }), say('mv f g'));
  assert.ok(has({ oldpath: join(dir, 'g'), newpath: join(dir, 'g2') }), say('rename g d/../g2'));
  assert.ok(has({ oldpath: join(dir, 'g2'), newpath: join(dir, 'h') }), say('link g2 h'));
  assert.ok(has({ path: join(dir, 'h') }), say('unlink h'));
  assert.ok(has({ name: join(dir, 'd', 'l') }) || has({ path: join(dir, 'd', 'l') }), say('rm d/l'));
  assert.ok(has({ name: join(dir, '.bash_history') }) || has({ path: join(dir, '.bash_history') }), say('rm .bash_history'));
  // setuid to our own uid (root here) and the failing BPF_PROG_LOAD
  assert.ok(has({ uid: 'root' }), say('setuid'));
  assert.ok(
    all.some((v) => v.cmd === '5' && /^E[A-Z0-9]+$/.test(String(v.fd)) && v.res === undefined),
    say('bpf BPF_PROG_LOAD'),
  );
  // evt.arg.pid/res of the failing ptrace calls, linkpath of symlink/symlinkat, dirfd of the *at calls
  assert.ok(has({ request: 'PTRACE_PEEKDATA', pid: String(NO_PID), res: 'ESRCH' }), say('ptrace PEEKDATA'));
  assert.ok(
    all.some((v) => v.request === 'PTRACE_ATTACH' && /^\d+$/.test(String(v.pid)) && v.res === 'EPERM'),
    say('ptrace ATTACH self'),
  );
  assert.ok(has({ target: '/etc/hostname', linkpath: join(dir, 'sl2'), res: '0' }), say('symlink'));
  assert.ok(has({ target: '/etc/hostname', linkpath: join(dir, 'lnk'), res: '0' }), say('ln -s'));
  assert.ok(has({ target: 'tgt', linkpath: join(dir, 'sub', 'sl3'), res: '0' }), say('symlinkat with a dirfd'));
  assert.ok(
    all.some((v) => v.path === join(dir, 'sub', 'm2') && /^\d+$/.test(String(v.dirfd)) && v.res === '0'),
    say('mkdirat with a dirfd'),
  );
  assert.ok(
    all.some((v) => v.path === join(dir, 'sub', 'm2') && /^\d+$/.test(String(v.dirfd)) && v.res === 'EEXIST'),
    say('failing mkdirat'),
  );
  assert.ok(has({ dirfd: 'AT_FDCWD', res: '0' }), say('an *at call on AT_FDCWD'));
});

test.run();
