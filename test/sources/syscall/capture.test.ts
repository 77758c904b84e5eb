// Real-kernel tests of the probe and addon: attach, choose the interesting syscalls, run real
// child processes, drain, decode, and check the records (syscall, arguments, return value, pid of
// the child). Skipped loudly with probeSupport()'s reason where the probe cannot run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { abi, syscallIds, syscallNr } from '../../../host/sources/syscall/index.js';
import type { EventRecord, ExitRecord, ProcRecord, SyscallRecord } from '../../helpers/record-decoder.js';
import { Collector, kernelGate } from './collector.js';

const gate = kernelGate('capture.test.ts');
const t = gate.run ? test : test.skip;
let c: Collector;
let dir: string;
let server: Server;

const isSys =
  (nr: number, pid: number) =>
  (r: EventRecord): r is SyscallRecord =>
    r.kind === abi.KIND.SYSCALL && r.nr === nr && r.pid === pid;
const isProc =
  (kind: number, pid: number) =>
  (r: EventRecord): r is ProcRecord =>
    r.kind === kind && r.pid === pid;
const isExit =
  (pid: number) =>
  (r: EventRecord): r is ExitRecord =>
    r.kind === abi.KIND.EXIT && r.pid === pid;

/** Runs a command to completion; resolves with its pid. */
function run(cmd: string, args: string[], cwd?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(child.pid!));
  });
}

const NAMES = [
  'openat',
  'open',
  'execve',
  'connect',
  'accept4',
  'accept',
  'sendmsg',
  'sendto',
  'symlinkat',
  'symlink',
  'renameat2',
  'renameat',
  'rename',
  'mkdir',
  'mkdirat',
  'fchmodat',
  'chmod',
  'unlinkat',
  'unlink',
  'rmdir',
  'socket',
  'listen',
  'bind',
  'chdir',
];

test.before(() => {
  if (!gate.run) return;
  c = new Collector();
  const { ids, unknown } = syscallIds(NAMES);
  assert.equal(unknown, []);
  assert.is(c.cap.setInterestingSyscalls(ids), ids.length);
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rae-probe-')));
  server = createServer((s) => s.end());
  return new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

test.after(() => {
  c?.close();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

t('cat /etc/hostname: fork, exec (argv, cwd, exe), openat with path and fd, exit', async () => {
  const pid = await run('cat', ['/etc/hostname']);
  const [exec] = await c.waitFor(isProc(abi.KIND.EXEC, pid), (rs) => rs.length > 0);
  assert.equal(exec.args, ['cat', '/etc/hostname']);
  assert.is(exec.comm, 'cat');
  assert.is(exec.exepath, realpathSync('/usr/bin/cat'));
  assert.is(exec.cwd, process.cwd());
  assert.is(exec.ppid, process.pid);
  assert.is(exec.uid, process.geteuid!());
  assert.ok(exec.startNs > 0n && exec.startNs <= exec.tsNs);
  assert.ok(exec.cgroup?.startsWith('/'));
  const [fork] = await c.waitFor(isProc(abi.KIND.FORK, pid), (rs) => rs.length > 0);
  assert.is(fork.ppid, process.pid);
  assert.is(fork.tid, pid);
  const opens = await c.waitFor(isSys(syscallNr('openat')!, pid), (rs) => rs.some((r) => r.path === '/etc/hostname'));
  const open = opens.find((r) => r.path === '/etc/hostname')!;
  assert.is(open.name, 'openat');
  assert.ok(open.ret >= 3, `fd ${open.ret}`);
  assert.is(Number(open.args[0] & 0xffffffffn), 0xffffff9c, 'dirfd AT_FDCWD');
  assert.is(Number(open.args[2]) & 3, 0, 'O_RDONLY');
  assert.is(open.dir, undefined, 'absolute path needs no base directory');
  const [exit] = await c.waitFor(isExit(pid), (rs) => rs.length > 0);
  assert.is(exit.exitCode, 0);
  assert.is(exit.xflags & abi.XF.GROUP_DEAD, abi.XF.GROUP_DEAD);
  assert.ok(exit.tsNs >= open.tsNs && open.tsNs >= exec.tsNs, 'time order exec < openat < exit');
});

t('relative open: path as passed plus the absolute directory it resolves against; failed execve', async () => {
  const name = `unique-${process.pid}-${Date.now()}.txt`;
  const pid = await run('sh', ['-c', `echo hi > ${name}; exec ./no-such-program-${process.pid}`], dir);
  const opens = await c.waitFor(isSys(syscallNr('openat')!, pid), (rs) => rs.some((r) => r.path === name));
  const open = opens.find((r) => r.path === name)!;
  assert.is(open.dir, dir);
  const O_WRONLY = 1,
    O_CREAT = 0o100,
    O_TRUNC = 0o1000;
  assert.is(Number(open.args[2]) & (O_WRONLY | O_CREAT | O_TRUNC), O_WRONLY | O_CREAT | O_TRUNC);
  assert.ok(open.ret >= 0);
  assert.is(readFileSync(join(dir, name), 'utf8'), 'hi\n');
  const program = `./no-such-program-${process.pid}`;
  const execs = await c.waitFor(isSys(syscallNr('execve')!, pid), (rs) => rs.some((r) => r.path === program));
  const failed = execs.find((r) => r.path === program)!;
  assert.is(failed.ret, -2, 'ENOENT');
  assert.is(failed.dir, dir);
});

t('connect to a loopback TCP server: peer and local addresses, return value', async () => {
  const port = (server.address() as AddressInfo).port;
  // `~nobody` makes glibc ask nscd first on every machine (an AF_UNIX socket and a connect to
  // /var/run/nscd/socket, ENOENT where nscd is absent), as bash may do by itself on some: the test
  // takes the socket and connect of the TCP server, not the first ones.
  const pid = await run('bash', ['-c', `: ~nobody; exec 3<>/dev/tcp/127.0.0.1/${port}`]);
  const isTcp = (r: { peer?: { family: number } }) => r.peer?.family === abi.AF.INET;
  const conns = await c.waitFor(isSys(syscallNr('connect')!, pid), (rs) => rs.some(isTcp));
  const conn = conns.find(isTcp)!;
  assert.ok(
    conns.some((r) => r.peer?.family === abi.AF.UNIX && r.tsNs < conn.tsNs),
    'the earlier AF_UNIX connect is captured too',
  );
  assert.is(conn.ret, 0);
  assert.equal(conn.peer, { family: abi.AF.INET, port, addr: '127.0.0.1' });
  assert.is(conn.local.family, abi.AF.INET);
  assert.is(conn.local.addr, '127.0.0.1');
  assert.ok(conn.local.port > 0 && conn.local.port !== port);
  // Likewise the nscd attempt opens an AF_UNIX socket first: take the AF_INET one.
  const isInet = (r: { args: bigint[] }) => r.args[0] === BigInt(abi.AF.INET);
  const socks = await c.waitFor(isSys(syscallNr('socket')!, pid), (rs) => rs.some(isInet));
  const sock = socks.find(isInet)!;
  assert.ok(sock.ret >= 0, `socket(AF_INET, ...) = ${sock.ret}`);
  assert.is(Number(conn.args[0]), sock.ret, 'connect uses the fd socket returned');
  assert.ok(sock.tsNs <= conn.tsNs, 'socket before connect');
});

t('accept4 in a child server and sendmsg of a UDP datagram: tuples from the socket and msg_name', async () => {
  const script = `
    const net = require('net'), dgram = require('dgram');
    const srv = net.createServer((s) => { s.destroy(); srv.close(); });
    srv.listen(0, '127.0.0.1', () => {
      const port = srv.address().port;
      process.stdout.write(String(port) + '\\n');
      const u = dgram.createSocket('udp4');
      u.send('x', ${(server.address() as AddressInfo).port}, '127.0.0.1', () => u.close());
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  const { createConnection } = await import('node:net');
  await new Promise<void>((resolve) =>
    createConnection(port, '127.0.0.1')
      .on('close', () => resolve())
      .on('error', () => resolve()),
  );
  await new Promise((resolve) => child.on('exit', resolve));
  const pid = child.pid!;
  const accepts = await c.waitFor(isSys(syscallNr('accept4')!, pid), (rs) => rs.some((r) => r.ret >= 0));
  const acc = accepts.find((r) => r.ret >= 0)!;
  assert.equal(acc.local, { family: abi.AF.INET, port, addr: '127.0.0.1' });
  assert.is(acc.peer.addr, '127.0.0.1');
  assert.ok(acc.peer.port > 0 && acc.peer.port !== port);
  const sends = await c.waitFor(isSys(syscallNr('sendmsg')!, pid), (rs) => rs.length > 0);
  assert.equal(sends[0].peer, { family: abi.AF.INET, port: (server.address() as AddressInfo).port, addr: '127.0.0.1' });
  assert.is(sends[0].ret, 1, 'one byte sent');
  const [listen] = await c.waitFor(isSys(syscallNr('listen')!, pid), (rs) => rs.length > 0);
  assert.is(listen.local.port, port);
});

/** Syscall records of `root` and every process it forked. */
function family(root: number): SyscallRecord[] {
  const pids = new Set([root]);
  for (const r of c.records) if (r.kind === abi.KIND.FORK && pids.has((r as ProcRecord).ppid)) pids.add(r.pid);
  return c.records.filter((r): r is SyscallRecord => r.kind === abi.KIND.SYSCALL && pids.has(r.pid));
}

t('file operations with coreutils (*at syscalls): symlink, rename, mkdir, chmod, unlink with both paths', async () => {
  const pid = await run('sh', ['-c', 'echo x > a && ln -s a link && mv a b && mkdir d && chmod 600 b && rm b link'], dir);
  await c.waitFor(isExit(pid), (rs) => rs.length > 0);
  const one = (...names: string[]) => {
    const r = family(pid).find((x) => names.includes(x.name) && x.ret === 0);
    assert.ok(r, `a successful ${names.join('/')} record`);
    return r!;
  };
  const sym = one('symlinkat', 'symlink');
  assert.is(sym.path, 'a', 'target stays as passed');
  assert.is(sym.path2, 'link');
  assert.is(sym.dir2, dir);
  const ren = one('renameat2', 'renameat', 'rename');
  assert.is(ren.path, 'a');
  assert.is(ren.path2, 'b');
  assert.is(ren.dir, dir);
  assert.is(ren.dir2, dir);
  const mk = one('mkdir', 'mkdirat');
  assert.is(mk.path, 'd');
  assert.is(mk.dir, dir);
  const ch = one('fchmodat', 'chmod');
  assert.is(ch.path, 'b');
  assert.is(Number(ch.args[2]) & 0o7777, 0o600);
  const un = family(pid).filter((r) => r.name === 'unlinkat' && r.ret === 0);
  assert.equal(un.map((r) => r.path).sort(), ['b', 'link']);
  assert.ok(un.every((r) => r.dir === dir));
});

t('file operations through libuv (plain syscalls): symlink, rename, mkdir, chmod, unlink, chdir', async () => {
  const script = `const fs = require('fs'); process.chdir(${JSON.stringify(dir)});
    fs.writeFileSync('p', 'x'); fs.symlinkSync('p', 'q'); fs.renameSync('p', 'r'); fs.mkdirSync('e');
    fs.chmodSync('r', 0o640); fs.unlinkSync('q'); fs.unlinkSync('r'); fs.rmdirSync('e');`;
  const pid = await run(process.execPath, ['-e', script]);
  await c.waitFor(isExit(pid), (rs) => rs.length > 0);
  const mine = family(pid);
  const by = (name: string) => mine.filter((r) => r.name === name && r.ret === 0);
  assert.equal(
    by('symlink').map((r) => [r.path, r.path2, r.dir2]),
    [['p', 'q', dir]],
  );
  assert.equal(
    by('rename').map((r) => [r.path, r.path2, r.dir, r.dir2]),
    [['p', 'r', dir, dir]],
  );
  assert.equal(
    by('mkdir').map((r) => [r.path, r.dir, Number(r.args[1]) & 0o777]),
    [['e', dir, 0o777]],
  );
  assert.equal(
    by('chmod').map((r) => [r.path, Number(r.args[1])]),
    [['r', 0o640]],
  );
  assert.equal(
    by('unlink').map((r) => r.path),
    ['q', 'r'],
  );
  assert.equal(
    by('chdir').map((r) => [r.path, r.dir]),
    [[dir, dir]],
    'chdir: dir is the cwd after the call',
  );
});

t('the interesting-syscall table filters in the kernel; process events always flow', async () => {
  c.cap.setInterestingSyscalls([]);
  const pid = await run('cat', ['/etc/hostname']);
  await c.waitFor(isExit(pid), (rs) => rs.length > 0);
  assert.is(c.records.filter((r) => r.pid === pid && r.kind === abi.KIND.SYSCALL).length, 0);
  assert.is(c.records.filter(isProc(abi.KIND.EXEC, pid)).length, 1);
  c.cap.setInterestingSyscalls(syscallIds(NAMES).ids);
});

t('counters: emitted, lost, seen are numbers; nothing lost in these tests; no decode errors', () => {
  const s = c.cap.stats();
  for (const k of ['emitted', 'lost', 'seen', 'truncated', 'queuedBytes', 'ringBytes'] as const) assert.type(s[k], 'number', k);
  assert.ok(s.emitted >= c.records.length);
  assert.is(s.lost, 0);
  assert.is(s.ringBytes, 32 << 20);
  assert.equal(c.decodeErrors, []);
});

t('bad arguments are clear errors', () => {
  assert.throws(() => c.cap.poll(new Uint8Array(100)), /at least maxRecord/);
  assert.throws(() => c.cap.setInterestingSyscalls([9999]), /9999 is outside 0..511/);
  assert.throws(() => c.cap.watch(() => undefined), /already/);
});

test.run();
