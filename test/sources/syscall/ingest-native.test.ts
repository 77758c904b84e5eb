// The native translator (probes/addon/ingest.c) writes the same eval records as the TypeScript
// oracle (ingest.ts with `native: false`) on generated records (kernel-batch.ts) and on records
// made for each field class: socket ends of every family, paths to normalize, runs of alike
// records, and the evt.arg.* parameters as libsinsp renders them, which alerts render alike
// (fieldsOf). Skipped when the addon is not built.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { KernelIngest, nativeTranslator } from '../../../host/sources/syscall/ingest.js';
import { loadNative } from '../../../host/sources/syscall/addon.js';
import type { RuleModule } from '../../../host/runtime/evaluator.js';
import { encodeProcRecord } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { decodeRecords } from './recording.js';
import { compileAll } from '../../../support/differential.js';
import { batch, proc, rules, syscallRecord } from './kernel-batch.js';

const lines0 = (s: string) => s.split('\n');

const native = 'error' in loadNative() ? test.skip : test;

/**
 * Records made for each field class, `len` bytes of `bytes`: IPv6 and unix-socket endpoints, a
 * relative path without a directory, a too-short record, ..., then `argRecords`, one per evt.arg.* case.
 */
function fieldClassRecords(): { bytes: Uint8Array; len: number; argRecords: Array<Parameters<typeof syscallRecord>[2]> } {
  // IPv6 and unix-socket endpoints, a relative path without a directory, a too-short record
  const extra = new Uint8Array(16384);
  let off = 0;
  off += syscallRecord(extra, off, {
    nr: syscallNr('connect')!,
    tid: 100,
    ret: -115n,
    args: [5n, 0n, 0n, 0n, 0n, 0n],
    peer: [10, 443, [0x20, 1, 0xd, 0xb8, ...Array<number>(11).fill(0), 1]],
    local: [10, 50000, [...Array<number>(15).fill(0), 1]],
  });
  off += syscallRecord(extra, off, { nr: syscallNr('connect')!, tid: 101, ret: 0n, args: [5n, 0n, 0n, 0n, 0n, 0n], peer: [1, 0, []], path: '/run/docker.sock' });
  off += syscallRecord(extra, off, { nr: syscallNr('openat')!, tid: 102, ret: 7n, args: [3n, 0n, 0x10000n, 0n, 0n, 0n], path: 'rel/x' });
  off += syscallRecord(extra, off, { nr: syscallNr('accept4')!, tid: 103, ret: 9n, args: [3n, 0n, 0n, 0n, 0n, 0n], peer: [2, 51000, [10, 1, 2, 3]], local: [2, 22, [10, 0, 0, 1]] });
  off += syscallRecord(extra, off, { nr: syscallNr('openat')!, tid: 104, ret: 3n, args: [0n, 0n, 0o1101n | 0o2000000n, 0n, 0n, 0n], path: '/var/log/syslog' });
  off += syscallRecord(extra, off, { nr: syscallNr('creat')!, tid: 104, ret: 3n, args: [0n, 0o644n, 0n, 0n, 0n, 0n], path: '/tmp/c' });
  for (const [type, a0] of [
    ['socket', 17n],
    ['socket', 99n],
    ['socket', -1n],
    ['ptrace', 0x4206n],
    ['ptrace', 0n],
    ['ptrace', 0x4300n],
  ] as const) {
    off += syscallRecord(extra, off, { nr: syscallNr(type)!, tid: 105, ret: 0n, args: [a0, 0n, 0n, 0n, 0n, 0n] });
  }
  off += syscallRecord(extra, off, { nr: syscallNr('symlinkat')!, tid: 105, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/shadow', dir: '/tmp' });
  // fd.l4proto from socket(2)'s arguments and from the probe's sock_type; fd.connected; fd.name_changed; proc.duration
  for (const [domain, type] of [
    [2n, 1n],
    [10n, 0x80002n],
    [2n, 3n],
    [1n, 1n],
    [2n, 5n],
  ] as const) {
    off += syscallRecord(extra, off, { nr: syscallNr('socket')!, tid: 105, ret: 4n, args: [domain, type, 0n, 0n, 0n, 0n] });
  }
  off += syscallRecord(extra, off, { nr: syscallNr('connect')!, tid: 100, ret: 0n, args: [5n, 0n, 0n, 0n, 0n, 0n], peer: [2, 443, [198, 51, 100, 7]], local: [2, 40000, [10, 0, 0, 1]], sockType: 1, ts: 5_000_000_001n });
  off += syscallRecord(extra, off, { nr: syscallNr('sendto')!, tid: 100, ret: 10n, args: [5n, 0n, 0n, 0n, 0n, 0n], peer: [10, 53, [...Array<number>(15).fill(0), 1]], local: [10, 40001, [...Array<number>(15).fill(0), 1]], sockType: 2 });
  off += syscallRecord(extra, off, { nr: syscallNr('connect')!, tid: 100, ret: -111n, args: [5n, 0n, 0n, 0n, 0n, 0n], peer: [2, 22, [10, 0, 0, 9]], local: [2, 40002, [10, 0, 0, 1]], sockType: 3 });
  // IPv6 tuples as connTuple renders them: v4-mapped, a single zero word, no local end
  off += syscallRecord(extra, off, {
    nr: syscallNr('connect')!,
    tid: 100,
    ret: 0n,
    args: [5n, 0n, 0n, 0n, 0n, 0n],
    peer: [10, 80, [...Array<number>(10).fill(0), 0xff, 0xff, 1, 2, 3, 4]],
    local: [10, 1234, [0x20, 1, 0, 0, 0, 1, ...Array<number>(9).fill(0), 2]],
  });
  off += syscallRecord(extra, off, { nr: syscallNr('sendto')!, tid: 100, ret: 1n, args: [5n, 0n, 0n, 0n, 0n, 0n], peer: [10, 53, [0xfe, 0x80, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6]] });
  off += syscallRecord(extra, off, { nr: syscallNr('accept')!, tid: 103, ret: 6n, args: [3n, 0n, 0n, 0n, 0n, 0n], peer: [2, 51000, [10, 1, 2, 3]], local: [2, 22, [10, 0, 0, 1]] });
  // paths that posix.normalize changes (fd.name) while fd.nameraw keeps them as passed
  for (const [path, dir] of [
    ['/etc/../etc//shadow', undefined],
    ['../../etc/./passwd', '/tmp/x'],
    ['/a/b/.', undefined],
    ['/..', undefined],
    ['//a//b/', undefined],
    ['/a/..', undefined],
    ['x/../../..', '/'],
  ] as const) {
    off += syscallRecord(extra, off, { nr: syscallNr('openat')!, tid: 104, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path, dir });
  }
  // runs of records with the same syscall, return value, open flags and family (the native
  // translator copies the fields those decide from the record before) and other fields that differ
  for (const [path, dir, tid] of [
    ['/etc/a', undefined, 100],
    ['rel/b', '/srv', 104],
    ['/x//y/../z', undefined, 999],
  ] as const) {
    off += syscallRecord(extra, off, { nr: syscallNr('openat')!, tid, ret: 3n, args: [0n, 0n, 0o101n, 0n, 0n, 0n], path, dir });
  }
  for (const path of ['/root/.ssh/id_rsa', '/etc/shadow']) off += syscallRecord(extra, off, { nr: syscallNr('openat')!, tid: 105, ret: -13n, args: [0n, 0n, 0n, 0n, 0n, 0n], path });
  for (const [fd, port, sockType] of [
    [5n, 443, 1],
    [6n, 53, 2],
    [7n, 22, 0],
  ] as const) {
    off += syscallRecord(extra, off, { nr: syscallNr('connect')!, tid: 100, ret: 0n, args: [fd, 0n, 0n, 0n, 0n, 0n], peer: [2, port, [10, 0, 0, Number(fd)]], local: [2, 40000 + port, [10, 0, 0, 1]], sockType });
  }
  for (const [domain, type] of [
    [2n, 1n],
    [16n, 3n],
    [10n, 2n],
  ] as const)
    off += syscallRecord(extra, off, { nr: syscallNr('socket')!, tid: 103, ret: 4n, args: [domain, type, 0n, 0n, 0n, 0n] });
  for (const fd of [3n, 9n]) off += syscallRecord(extra, off, { nr: syscallNr('dup')!, tid: 103, ret: 11n, args: [fd, 0n, 0n, 0n, 0n, 0n] });
  // evt.arg.* parameters (render.ts): path parameters resolved only when relative, modes, fds, uids, bpf commands
  const argRecords: Array<Parameters<typeof syscallRecord>[2]> = [
    { nr: syscallNr('fchmodat')!, tid: 100, ret: 0n, args: [0xffffff9cn, 0n, 0o4644n, 0n, 0n, 0n], path: 'f', dir: '/tmp/w' },
    { nr: syscallNr('chmod')!, tid: 100, ret: -1n, args: [0n, 0o2000n, 0n, 0n, 0n, 0n], path: '/tmp/../etc/x' },
    { nr: syscallNr('fchmod')!, tid: 100, ret: 0n, args: [7n, 0o100000n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('mkdir')!, tid: 101, ret: 0n, args: [0n, 0o755n, 0n, 0n, 0n, 0n], path: 'd/./e', dir: '/srv/' },
    { nr: syscallNr('mkdirat')!, tid: 101, ret: -17n, args: [3n, 0n, 0o700n, 0n, 0n, 0n], path: '/abs/d' },
    { nr: syscallNr('rmdir')!, tid: 101, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '../up', dir: '/srv/a' },
    { nr: syscallNr('unlink')!, tid: 102, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/root//.bash_history' },
    { nr: syscallNr('unlinkat')!, tid: 102, ret: 0n, args: [0xffffff9cn, 0n, 0x200n, 0n, 0n, 0n], path: '.zsh_history', dir: '/home/u' },
    { nr: syscallNr('rename')!, tid: 102, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: 'a', dir: '/w', path2: '../b', dir2: '/w/x' },
    { nr: syscallNr('renameat2')!, tid: 102, ret: 0n, args: [0n, 0n, 0n, 0n, 1n, 0n], path: '/w/a', path2: '/w//b' },
    { nr: syscallNr('linkat')!, tid: 102, ret: -2n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: 'l', dir: '/', path2: 'n', dir2: '/q/' },
    { nr: syscallNr('memfd_create')!, tid: 103, ret: 5n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: 'rel-name' },
    { nr: syscallNr('chdir')!, tid: 103, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: 'sub', dir: '/after/sub' },
    { nr: syscallNr('openat')!, tid: 104, ret: 3n, args: [0n, 0n, 0o1101n, 0o4755n, 0n, 0n], path: 'new', dir: '/tmp' },
    { nr: syscallNr('open')!, tid: 104, ret: -2n, args: [0n, 0n, 0o644n, 0n, 0n, 0n], path: '/missing' },
    { nr: syscallNr('creat')!, tid: 104, ret: 4n, args: [0n, 0o600n, 0n, 0n, 0n, 0n], path: '/tmp/c2' },
    { nr: syscallNr('setuid')!, tid: 105, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('setuid')!, tid: 105, ret: -1n, args: [0xffffffffn, 0n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('setuid')!, tid: 105, ret: -1n, args: [4_000_000_123n, 0n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('bpf')!, tid: 105, ret: -22n, args: [5n, 0n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('connect')!, tid: 105, ret: -9n, args: [0xffffffffffffff9cn, 0n, 0n, 0n, 0n, 0n] },
    // evt.arg.pid (ptrace's pid_t), evt.arg.linkpath (symlink/symlinkat), evt.arg.dirfd (execveat)
    { nr: syscallNr('ptrace')!, tid: 105, ret: 0n, args: [16n, 4242n, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('ptrace')!, tid: 105, ret: -3n, args: [16n, 0xffffffffn, 0n, 0n, 0n, 0n] },
    { nr: syscallNr('symlink')!, tid: 105, ret: 0n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/shadow', path2: 'lnk', dir2: '/tmp/w' },
    { nr: syscallNr('symlinkat')!, tid: 105, ret: -17n, args: [0n, 5n, 0n, 0n, 0n, 0n], path: 'tgt', path2: '/x//y' },
    { nr: syscallNr('symlinkat')!, tid: 105, ret: 0n, args: [0n, 0xffffff9cn, 0n, 0n, 0n, 0n], path: 'tgt', path2: 'a/../b', dir2: '/d' },
    { nr: syscallNr('execveat')!, tid: 105, ret: -2n, args: [4n, 0n, 0n, 0n, 0n, 0n], path: 'prog' },
  ];
  for (const r of argRecords) off += syscallRecord(extra, off, r);
  return { bytes: extra, len: off, argRecords };
}

/** The evt.arg.* values of the last `n` records (the argRecords, `lines` their decoded eval records) as libsinsp renders them, in the eval records and in fieldsOf. */
function assertArgTexts(js: KernelIngest, m: RuleModule, extra: Uint8Array, lastOffsets: number[], lines: string[], n: number): void {
  const argLines = lines.slice(-n);
  const want: Array<Record<string, string>> = [
    { filename: '/tmp/w/f', mode: 'S_IROTH|S_IRGRP|S_IWUSR|S_IRUSR|S_ISUID' },
    { filename: '/tmp/../etc/x', mode: 'S_ISGID' },
    { fd: '7', mode: '0' },
    { path: '/srv/d/e', mode: '1ED' },
    { path: '/abs/d', mode: '1C0' },
    { path: '/srv/up' },
    { path: '/root//.bash_history' },
    { name: '/home/u/.zsh_history' },
    { oldpath: '/w/a', newpath: '/w/b' },
    { oldpath: '/w/a', newpath: '/w//b' },
    { oldpath: '/l', newpath: '/q/n' },
    { name: 'rel-name', fd: '5' },
    { path: 'sub' },
    { name: '/tmp/new', mode: '04755', fd: '3' },
    { name: '/missing', mode: '0', fd: 'ENOENT' },
    { name: '/tmp/c2', mode: '0600', fd: '4' },
    { uid: 'root' },
    { uid: '<NONE>' },
    { uid: '<NA>' },
    { cmd: '5', fd: 'EINVAL' },
    { fd: 'AT_FDCWD' },
    {},
    {},
    {},
    {},
    {},
    {},
  ];
  // each record's values of the parameters `names`, in its eval record and rendered for an alert (fieldsOf)
  const check = (wants: Array<Record<string, string>>, names: string) =>
    wants.forEach((w, i) => {
      const got = Object.fromEntries([...argLines[i]!.matchAll(new RegExp(`evt\\.arg\\.(${names})="([^"]*)"`, 'g'))].map((x) => [x[1], x[2]]));
      assert.equal(got, w, `record ${i}: ${argLines[i]}`);
      // and matched events render the same values (fieldsOf)
      const k = lastOffsets.length - n + i;
      const fields = js.fieldsOf(m, extra, lastOffsets[k]!, k);
      const rendered = Object.fromEntries(
        Object.entries(fields)
          .filter(([f]) => new RegExp(`^evt\\.arg\\.(${names})$`).test(f))
          .map(([f, v]) => [f.slice(8), v]),
      );
      assert.equal(rendered, w, `record ${i} rendered`);
    });
  check(want, 'name|path|filename|oldpath|newpath|mode|fd|uid|cmd');
  // evt.arg.pid/dirfd/res/linkpath (render.ts): res the errno name or the number, none where the return value is evt.arg.fd
  const want2: Array<Record<string, string>> = [
    { dirfd: 'AT_FDCWD', res: '0' },
    { res: 'EPERM' },
    { res: '0' },
    { res: '0' },
    { dirfd: '3', res: 'EEXIST' },
    { res: '0' },
    { res: '0' },
    { dirfd: 'AT_FDCWD', res: '0' },
    { res: '0' },
    { res: '0' },
    { res: 'ENOENT' },
    {},
    { res: '0' },
    { dirfd: '0' },
    {},
    {},
    { res: '0' },
    { res: 'EPERM' },
    { res: 'EPERM' },
    {},
    { res: 'EBADF' },
    { pid: '4242', res: '0' },
    { pid: '-1', res: 'ESRCH' },
    { linkpath: '/tmp/w/lnk', res: '0' },
    { linkpath: '/x//y', res: 'EEXIST' },
    { linkpath: '/d/b', res: '0' },
    { dirfd: '4', res: 'ENOENT' },
  ];
  assert.is(want2.length, n);
  check(want2, 'pid|dirfd|res|linkpath');
}

native('kernel ingest: the native translator (probes/addon/ingest.c) writes the same eval records as the JS one', async () => {
  assert.ok(nativeTranslator(), 'the addon loads but its ingestAbi disagrees with ingest.ts');
  // a rule reading every evt.arg.* parameter, so each has a slot (filename, fd and newpath are only in outputs upstream)
  const argRule = loadRules([
    {
      name: 'args.yaml',
      text: `- rule: every evt.arg\n  desc: d\n  condition: evt.type in (chmod, fchmod, fchmodat, mkdir, mkdirat, rmdir, unlink, unlinkat, rename, renameat, renameat2, link, linkat, memfd_create, chdir, open, openat, openat2, creat, setuid, bpf, connect, socket, ptrace, symlink, symlinkat, execveat) and (${['name', 'path', 'filename', 'oldpath', 'newpath', 'mode', 'fd', 'uid', 'cmd', 'pid', 'dirfd', 'res', 'linkpath'].map((a) => `evt.arg.${a} exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n`,
    },
  ]).ruleset.rules;
  // and one reading the header values and constants, so each has a slot too
  const headRule = loadRules([
    {
      name: 'head.yaml',
      text: `- rule: header values\n  desc: d\n  condition: evt.type in (connect, openat, socket) and (${['thread.tid', 'evt.time', 'evt.rawtime', 'evt.dir', 'evt.source', 'evt.hostname', 'evt.is_open_exec'].map((f) => `${f} exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n`,
    },
  ]).ruleset.rules;
  assert.is(headRule.length, 1);
  // and one reading proc.env and variables of it (proc.env[NAME]'s key travels in the native plan)
  const envRule = loadRules([
    {
      name: 'env.yaml',
      text: `- rule: env values\n  desc: d\n  condition: evt.type in (connect, openat, socket) and (proc.env contains x or ${['HTTP_PROXY', 'LANG', 'GLIBC_TUNABLES', 'NOPE', 'X'].map((k) => `proc.env[${k}] exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n`,
    },
  ]).ruleset.rules;
  assert.is(envRule.length, 1);
  const m = await compileAll([...rules, ...argRule, ...headRule, ...envRule]);
  const c = new KernelIngest({ hostname: 'h1.example' });
  const js = new KernelIngest({ native: false, hostname: 'h1.example' });
  const epoch = 1_763_000_000_123_456_789n;
  assert.ok(c.native && !js.native);
  const { bytes: extra, len: off, argRecords } = fieldClassRecords();
  const procs = new Uint8Array(4096);
  let plen = 0;
  for (const pid of [100, 103, 105]) plen += encodeProcRecord(proc(pid, 1, 'sshd', ['sshd']), procs, plen, 1_000_000_000n);
  for (const k of [c, js]) k.ingest(m, procs, plen);
  const batches = [...Array.from({ length: 8 }, (_, i) => batch(100 + i, 3000, i % 3 === 0)), { bytes: extra, len: off }];
  let compared = 0;
  const envValues: string[] = [];
  for (const b of batches) {
    const oc = c.ingest(m, b.bytes, b.len, epoch);
    const fromC = decodeRecords(m, oc.length);
    const oj = js.ingest(m, b.bytes, b.len, epoch);
    const fromJs = decodeRecords(m, oj.length);
    assert.equal(oc, oj, 'the same records become events');
    assert.equal(fromC, fromJs);
    compared += oc.length;
    envValues.push(...fromC.flatMap((l) => l.match(/proc\.env\[\w+\]="[^"]*"/g) ?? []));
  }
  assert.ok(compared > 20000, `${compared} records compared`);
  // libsinsp's get_env(name) on the environments of ENVS: stripped, whole variables, the first with a value, "" when none
  for (const v of ['proc.env[HTTP_PROXY]="http://p.invalid:1"', 'proc.env[HTTP_PROXY]="second"', 'proc.env[X]="a HTTP_PROXY=no"', 'proc.env[LANG]="C"', 'proc.env[GLIBC_TUNABLES]="glibc.malloc.mxfast=0"', 'proc.env[NOPE]=""'])
    assert.ok(envValues.includes(v), v);
  const lastOffsets = js.ingest(m, extra, off, epoch);
  const joined = decodeRecords(m, lastOffsets.length).join('\n');
  // the header values: the thread id, the record time moved to the epoch (as a number and as its decimal text), constants
  const ts = 5_000_000_001n + epoch;
  assert.ok(
    lines0(joined).some((l) => l.includes(`evt.time="${ts}"`) && l.includes(`evt.rawtime=${ts}`) && l.includes('thread.tid=100 ')),
    `evt.time ${ts}: ${lines0(joined)
      .filter((l) => l.includes(String(ts)))
      .join('\n')} / ${lines0(joined)
      .filter((l) => l.includes('evt.time'))
      .slice(0, 3)
      .join('\n')}`,
  );
  for (const want of ['evt.dir="<"', 'evt.source="syscall"', 'evt.hostname="h1.example"', 'evt.is_open_exec=0', 'thread.tid=105 ']) assert.ok(joined.includes(want), want);
  assert.ok(
    lines0(joined).every((l) => /evt\.dir="<" evt\.source="syscall" evt\.hostname="h1\.example" evt\.is_open_exec=[01](?: |$)/.test(l) || !l.includes('evt.dir')),
    'every record has the constants',
  );
  assert.match(joined, '"ipv6"');
  assert.match(joined, '"/run/docker.sock"');
  assert.match(joined, 'evt.arg.flags="O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"');
  assert.match(joined, 'evt.arg.domain="AF_PACKET"');
  assert.match(joined, 'evt.arg.domain="99"');
  assert.match(joined, 'evt.arg.request="PTRACE_SEIZE"');
  assert.match(joined, 'evt.arg.request="17152"');
  assert.match(joined, 'evt.arg.target="/etc/shadow"');
  assert.match(joined, 'fd.name="/etc/shadow" fd.nameraw="/etc/../etc//shadow"');
  assert.match(joined, 'fd.name="/etc/passwd" fd.nameraw="../../etc/./passwd"');
  assert.match(joined, 'fd.name="/a/b/" fd.nameraw="//a//b/"');
  // evt.arg.* as libsinsp renders them (render.ts), one line per record of argRecords
  assertArgTexts(js, m, extra, lastOffsets, lines0(joined), argRecords.length);
  for (const want of ['fd.l4proto="tcp"', 'fd.l4proto="udp"', 'fd.l4proto="raw"', 'fd.connected=1', 'fd.connected=0', 'fd.name_changed=1', 'fd.name_changed=0', 'proc.duration=5000000000']) assert.ok(joined.includes(want), want);
  const lines = joined.split('\n');
  for (const want of ['fd.name="::1:50000->2001:db8::1:443"', 'fd.name="2001:0:1::2:1234->::ffff:1.2.3.4:80"', 'fd.name="0.0.0.0:0->fe80:0:1:2:3:4:5:6:53"']) assert.ok(joined.includes(want), want);
  assert.ok(
    lines.some((l) => l.includes('fd.name="10.0.0.1:40000->198.51.100.7:443"') && l.includes('fd.l4proto="tcp"') && l.includes('fd.connected=1')),
    'the connect record',
  );
  assert.ok(
    lines.some((l) => l.includes('fd.l4proto="raw"') && l.includes('fd.connected=0')),
    lines.filter((l) => l.includes('raw')).join('\n'),
  );
});

test.run();
