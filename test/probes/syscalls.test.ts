// Every syscall the probe decodes, made for real by a small C program (fixtures/exercise.c,
// compiled here with gcc) with known arguments: each record's arguments, strings, socket
// addresses and return value are checked. Skipped loudly where the probe cannot run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { abi, DECODED, syscallIds } from '../../host/sources/syscall/index.js';
import type { EventRecord, ExitRecord, SyscallRecord } from '../helpers/record-decoder.js';
import { Collector, kernelGate } from '../sources/syscall/collector.js';

const gate = kernelGate('syscalls.test.ts');
const source = fileURLToPath(new URL('./fixtures/exercise.c', import.meta.url));
let dir = '';
let recs: SyscallRecord[] = [];
let pid = 0;

test.before(async () => {
  if (!gate.run) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rae-sys-')));
  const bin = join(dir, 'exercise');
  execFileSync('gcc', ['-O1', '-o', bin, source]);
  const c = new Collector();
  try {
    c.cap.setInterestingSyscalls(syscallIds(DECODED).ids);
    const child = (await import('node:child_process')).spawn(bin, ['all', dir], { stdio: 'inherit' });
    pid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    await c.waitFor(
      (r: EventRecord): r is ExitRecord => r.kind === abi.KIND.EXIT && r.pid === pid,
      (rs) => rs.length > 0,
    );
    recs = c.records.filter((r): r is SyscallRecord => r.kind === abi.KIND.SYSCALL && r.pid === pid);
    assert.is(c.cap.stats().lost, 0);
  } finally {
    c.close();
  }
});

test.after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const t = gate.run ? test : test.skip;
const lo32 = (v: bigint) => Number(v & 0xffffffffn) | 0;
function one(name: string, pick: (r: SyscallRecord) => boolean = () => true): SyscallRecord {
  const found = recs.filter((r) => r.name === name && pick(r));
  assert.is(found.length, 1, `exactly one ${name} record (have ${recs.map((r) => r.name).join(',')})`);
  return found[0];
}

t('open family: openat2 (open_how read from user memory), creat', () => {
  const o2 = one('openat2');
  assert.equal([o2.path, o2.dir], ['/etc/hostname', undefined]);
  assert.ok(o2.ret >= 3);
  assert.equal(o2.aux, [0o2000000n, 0n, 0x04n], 'how: O_CLOEXEC, mode 0, RESOLVE_NO_SYMLINKS');
  const cr = one('creat');
  assert.equal([cr.path, cr.dir, Number(cr.args[1])], ['created.txt', dir, 0o640]);
  assert.ok(cr.ret >= 3);
});

t('descriptors and modes: fchmod, chmod, dup, dup2, dup3', () => {
  const fd = one('creat').ret;
  assert.equal([lo32(one('fchmod').args[0]), Number(one('fchmod').args[1]), one('fchmod').ret], [fd, 0o600, 0]);
  assert.equal([one('chmod').path, Number(one('chmod').args[1])], ['created.txt', 0o604]);
  assert.equal([lo32(one('dup2').args[0]), lo32(one('dup2').args[1]), one('dup2').ret], [fd, 100, 100]);
  assert.equal([lo32(one('dup3').args[1]), Number(one('dup3').args[2]), one('dup3').ret], [101, 0o2000000, 101]);
  assert.is(lo32(one('dup').args[0]), fd);
  assert.ok(one('dup').ret > fd);
});

t('names: link, linkat, symlink, rename, renameat, unlink, mkdir, mkdirat, rmdir, memfd_create', () => {
  const both = (r: SyscallRecord) => [r.path, r.path2, r.dir, r.dir2, r.ret];
  assert.equal(both(one('link')), ['created.txt', 'hard.txt', dir, dir, 0]);
  assert.equal(both(one('linkat')), ['hard.txt', 'hard2.txt', dir, dir, 0]);
  assert.equal(both(one('symlink')), ['created.txt', 'soft.txt', undefined, dir, 0]);
  assert.equal(both(one('rename')), ['hard2.txt', 'renamed.txt', dir, dir, 0]);
  assert.equal(both(one('renameat')), ['renamed.txt', 'renamed2.txt', dir, dir, 0]);
  assert.equal([one('unlink').path, one('unlink').ret], ['renamed2.txt', 0]);
  assert.equal([one('mkdir').path, Number(one('mkdir').args[1]), one('mkdir').dir], ['sub', 0o750, dir]);
  assert.equal([one('mkdirat').path, Number(one('mkdirat').args[2])], ['sub2', 0o700]);
  assert.equal([one('rmdir').path, one('rmdir').ret], ['sub2', 0]);
  const memfd = one('memfd_create');
  assert.equal([memfd.path, Number(memfd.args[1])], ['rae-memfd', 1]);
  assert.ok(memfd.ret >= 0);
});

t('UDP: socket, bind (bound port), sendto, recvfrom and recvmsg with the source address', () => {
  const sock = one('socket', (r) => r.args[0] === 2n);
  assert.equal(sock.args.slice(0, 3), [2n, 2n, 0n]);
  const bind = one('bind', (r) => r.local.family === abi.AF.INET);
  const port = bind.local.port;
  assert.ok(port > 0, 'bind reports the port the kernel chose');
  const me = { family: abi.AF.INET, port, addr: '127.0.0.1' };
  const sent = recs.filter((r) => r.name === 'sendto');
  assert.equal(
    sent.map((r) => [r.ret, r.peer, r.local]),
    [
      [4, me, me],
      [5, me, me],
    ],
  );
  assert.equal([one('recvfrom').ret, one('recvfrom').peer], [4, me]);
  assert.equal([one('recvmsg').ret, one('recvmsg').peer], [5, me]);
});

t('unix sockets: bind, listen, connect, accept carry the socket path', () => {
  const path = `${dir}/unix.sock`;
  const unix = (r: SyscallRecord) => r.local.family === abi.AF.UNIX || r.peer.family === abi.AF.UNIX;
  assert.equal([one('bind', unix).path, one('bind', unix).ret], [path, 0]);
  assert.equal([one('listen').path, Number(one('listen').args[1]), one('listen').local.family], [path, 7, abi.AF.UNIX]);
  assert.equal([one('connect').path, one('connect').peer.family, one('connect').ret], [path, abi.AF.UNIX, 0]);
  const acc = one('accept');
  assert.ok(acc.ret >= 0);
  assert.equal([acc.path, acc.local.family], [path, abi.AF.UNIX]);
});

t('privilege and kernel syscalls: ptrace, setuid, unshare, setns, bpf, userfaultfd, init_module, finit_module', () => {
  const pt = one('ptrace');
  assert.equal([Number(pt.args[0]), Number(pt.args[1]), pt.ret], [2, process.pid, -3], 'PTRACE_PEEKDATA on the parent: ESRCH');
  assert.equal([Number(one('setuid').args[0]), one('setuid').ret], [process.geteuid!(), 0]);
  assert.equal([Number(one('unshare').args[0]), one('unshare').ret], [0, 0]);
  assert.equal([lo32(one('setns').args[0]), one('setns').ret], [-1, -9]);
  assert.ok(one('bpf').ret < 0);
  assert.is(Number(one('userfaultfd').args[0]), 0o2000000);
  const im = one('init_module');
  assert.equal([im.path, im.ret < 0], ['rae_param=1', true]);
  const fm = one('finit_module');
  assert.equal([fm.path, lo32(fm.args[0]), fm.ret < 0], ['rae_fparam=2', -1, true], 'EBADF, or ENOSYS without module support');
});

t('failed execveat: path, base directory and ENOENT', () => {
  const ex = one('execveat');
  assert.equal([ex.path, ex.dir, ex.ret], ['no-such-exe', dir, -2]);
});

test.run();
