// The syscall byte path: kernel wire records (PROC/FORK/EXIT and SYSCALL, probes/src/events.h)
// ingested into a module's memory (thread table in the state region, eval records in the batch
// region) must be judged exactly as the reference interpreter judges the same events decoded into
// fields; the native translator (probes/addon/ingest.c) writes the same eval records as the
// TypeScript oracle (ingest.ts with `native: false`) on generated records; the thread table
// survives a hot swap (state carried over) and process exits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../../host/engine/index.js';
import { Interpreter } from '../../../host/engine/interpreter.js';
import { KernelIngest, nativeTranslator } from '../../../host/sources/syscall/ingest.js';
import { loadNative } from '../../../host/sources/syscall/addon.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import type { RuleModule } from '../../../host/runtime/evaluator.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { EXIT, HDR, KIND, PF, PROC, SIZES, SYSCALL, XF } from '../../../host/abi/records.js';
import { encodeProcRecord, type ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { decodeRecords } from './recording.js';
import { collectPools, compileAll } from '../../../support/differential.js';
import { corpusText } from '../../../support/corpus.js';
import { containerRecord } from '../../helpers/container-record.js';

const rules = loadRules(['falco_rules.yaml', 'falco-incubating_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) }))).ruleset.rules;
const pools = collectPools(rules);
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function proc(pid: number, ppid: number, comm: string, args: string[], cgroup = '/user.slice'): ProcSnapshot {
  return {
    pid,
    ppid,
    vpid: pid,
    sid: pid,
    pgid: pid,
    ruid: 0,
    euid: pid % 3 === 0 ? 0 : 1000,
    rgid: 0,
    egid: 0,
    loginuid: pid % 2 ? 4294967295 : 1000,
    tty: pid % 5 === 0 ? 34816 : 0,
    startNs: 1n,
    pidns: 1,
    mntns: 1,
    cgroupId: 1n,
    exeWritable: pid % 4 === 0,
    // root-like sets for euid 0, CAP_NET_BIND_SERVICE alone otherwise, an empty inheritable set but for every 7th
    capInheritable: pid % 7 === 0 ? 0x400n : 0n,
    capPermitted: pid % 3 === 0 ? 0x1ffffffffffn : 0x400n,
    capEffective: pid % 3 === 0 ? 0x1ffffffffffn : 0x400n,
    comm: Buffer.from(comm),
    exepath: Buffer.from(`/usr/bin/${comm}`),
    args: args.map((a) => Buffer.from(a)),
    cwd: Buffer.from('/root'),
    cgroup: Buffer.from(cgroup),
    env: ENVS[pid % ENVS.length],
  };
}

/** Environments by pid (proc.env[NAME]: blanks to strip, a value holding a blank and NAME=, an empty value before the real one, none at all). */
const ENVS = [undefined, 'HOME=/root\0HTTP_PROXY= http://p.invalid:1 \0LANG=C', 'X=a HTTP_PROXY=no\0HTTP_PROXY=\0HTTP_PROXY=second', 'GLIBC_TUNABLES=glibc.malloc.mxfast=0', ''].map((e) => (e === undefined ? undefined : Buffer.from(e)));

/** A RAE_KIND_SYSCALL record. */
function syscallRecord(
  out: Uint8Array,
  off: number,
  f: { nr: number; tid: number; ret: bigint; args?: bigint[]; path?: string; dir?: string; path2?: string; dir2?: string; peer?: [number, number, number[]]; local?: [number, number, number[]]; sockType?: number; ts?: bigint },
): number {
  const strs: Array<[number, Buffer]> = [];
  if (f.path !== undefined) strs.push([SYSCALL.path, Buffer.from(f.path)]);
  if (f.dir !== undefined) strs.push([SYSCALL.dir, Buffer.from(f.dir)]);
  if (f.path2 !== undefined) strs.push([SYSCALL.path2, Buffer.from(f.path2)]);
  if (f.dir2 !== undefined) strs.push([SYSCALL.dir2, Buffer.from(f.dir2)]);
  const len = (strs.reduce<number>((n, [, s]) => n + s.length + 1, SIZES.syscall) + 7) & ~7;
  out.fill(0, off, off + len);
  const dv = new DataView(out.buffer, out.byteOffset + off, len);
  dv.setUint32(HDR.len, len, true);
  dv.setUint16(HDR.kind, KIND.SYSCALL, true);
  dv.setUint16(HDR.nr, f.nr, true);
  dv.setUint32(HDR.pid, f.tid === 1101 ? 101 : f.tid, true); // 1101: a thread of 101
  dv.setUint32(HDR.tid, f.tid, true);
  dv.setBigInt64(HDR.ret, f.ret, true);
  dv.setBigUint64(HDR.ts_ns, f.ts ?? 0n, true);
  dv.setUint32(SYSCALL.sock_type, f.sockType ?? 0, true);
  (f.args ?? []).forEach((a, i) => dv.setBigUint64(SYSCALL.args + 8 * i, a, true));
  for (const [at, sa] of [
    [SYSCALL.peer, f.peer],
    [SYSCALL.local, f.local],
  ] as const) {
    if (!sa) continue;
    dv.setUint16(at, sa[0], true);
    dv.setUint16(at + 2, sa[1], true);
    sa[2].forEach((b, i) => dv.setUint8(at + 8 + i, b));
  }
  let pos = SIZES.syscall;
  for (const [at, s] of strs) {
    out.set(s, off + pos);
    dv.setUint16(at, pos, true);
    dv.setUint16(at + 2, s.length, true);
    pos += s.length + 1;
  }
  return len;
}

function exitRecord(out: Uint8Array, off: number, pid: number): number {
  out.fill(0, off, off + SIZES.exit);
  const dv = new DataView(out.buffer, out.byteOffset + off);
  dv.setUint32(HDR.len, SIZES.exit, true);
  dv.setUint16(HDR.kind, KIND.EXIT, true);
  dv.setUint32(HDR.pid, pid, true);
  dv.setUint32(HDR.tid, pid, true);
  dv.setUint32(EXIT.xflags, XF.GROUP_DEAD, true);
  return SIZES.exit;
}

/** A batch: a process tree (PROC and FORK records), n syscalls, some exits. */
function batch(seed: number, n: number, withProcs = true): { bytes: Uint8Array; len: number } {
  let s = seed;
  const r = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const buf = new Uint8Array(8 * 2 ** 20);
  let off = 0;
  const names = [...(pools.get('proc.name')?.values ?? ['bash'])].filter((x) => x.length > 0 && x.length < 16 && !x.includes('*'));
  const paths = (pools.get('fd.name')?.values ?? ['/etc/shadow']).filter((p) => p.startsWith('/'));
  // bind too (no rule names it, but its record is read like listen's)
  const types = [...new Set([...rules.flatMap((x) => [...(x.evttypes ?? [])]), 'bind'])].filter((t) => syscallNr(t) !== undefined);
  if (withProcs) {
    for (let pid = 100; pid < 140; pid++) {
      const ppid = pid === 100 ? 1 : 100 + Math.floor(r() * (pid - 100));
      const comm = pick(r, names);
      off += encodeProcRecord(proc(pid, ppid, comm, [comm, ...(r() < 0.5 ? ['-c', pick(r, names)] : [])], r() < 0.3 ? `/kubepods/pod1/${'ab'.repeat(32)}` : '/user.slice'), buf, off, 1n);
    }
    // a thread of pid 101 and a fork of 102 (comm only)
    const fork = proc(140, 102, pick(r, names), []);
    const flen = encodeProcRecord(fork, buf, off, 1n);
    new DataView(buf.buffer, off).setUint16(HDR.kind, KIND.FORK, true);
    off += flen;
    const th = proc(101, 100, 'thr', []);
    const tlen = encodeProcRecord(th, buf, off, 1n);
    new DataView(buf.buffer, off).setUint16(HDR.kind, KIND.FORK, true);
    new DataView(buf.buffer, off).setUint32(HDR.tid, 1101, true);
    new DataView(buf.buffer, off).setUint32(PROC.pflags, PF.THREAD, true);
    off += tlen;
  }
  for (let i = 0; i < n; i++) {
    if (withProcs && i === n >> 1) off += exitRecord(buf, off, 105);
    const t = pick(r, types);
    const tid = pick(r, [100, 101, 102, 103, 105, 110, 120, 139, 140, 1101, 999]);
    const ret = r() < 0.8 ? BigInt(Math.floor(r() * 20)) : pick(r, [-2n, -13n, -1n, -111n]);
    const rel = r() < 0.2;
    const path = rel ? pick(r, paths).split('/').pop()! : r() < 0.8 ? pick(r, paths) : `/tmp/x${i}`;
    const flags = BigInt(pick(r, [0, 1, 2, 0x41, 0x241, 0x10000]));
    const ip = [10, 0, 0, Math.floor(r() * 4)];
    off += syscallRecord(buf, off, {
      nr: syscallNr(t)!,
      tid,
      ret,
      args: [3n, flags, flags, 0n, 0n, 0n],
      path: r() < 0.9 ? path : undefined,
      dir: rel ? pick(r, ['/etc', '/etc/', '/root']) : undefined,
      peer: t === 'connect' || t.startsWith('accept') || r() < 0.1 ? [2, pick(r, [22, 443, 4444]), ip] : undefined,
      // bind/listen: a bound end (port 0 for every third: not a server socket)
      local: t === 'connect' || t.startsWith('accept') ? [2, 40000 + i, [172, 17, 0, 2]] : t === 'bind' || t === 'listen' ? [2, i % 3 === 0 ? 0 : 8000 + i, [10, 0, 0, i % 2]] : undefined,
      sockType: pick(r, [0, 1, 2, 3, 5]),
      ts: BigInt(i) * 1_000_000_000n,
    });
  }
  return { bytes: buf, len: off };
}

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

const lines0 = (s: string) => s.split('\n');

const native = 'error' in loadNative() ? test.skip : test;

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
  const argLines = lines0(joined).slice(-argRecords.length);
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
  want.forEach((w, i) => {
    const got = Object.fromEntries([...argLines[i]!.matchAll(/evt\.arg\.(name|path|filename|oldpath|newpath|mode|fd|uid|cmd)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    assert.equal(got, w, `record ${i}: ${argLines[i]}`);
    // and matched events render the same values (fieldsOf)
    const k = lastOffsets.length - argRecords.length + i;
    const fields = js.fieldsOf(m, extra, lastOffsets[k]!, k);
    const rendered = Object.fromEntries(
      Object.entries(fields)
        .filter(([f]) => /^evt\.arg\.(name|path|filename|oldpath|newpath|mode|fd|uid|cmd)$/.test(f))
        .map(([f, v]) => [f.slice(8), v]),
    );
    assert.equal(rendered, w, `record ${i} rendered`);
  });
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
  assert.is(want2.length, argRecords.length);
  want2.forEach((w, i) => {
    const got = Object.fromEntries([...argLines[i]!.matchAll(/evt\.arg\.(pid|dirfd|res|linkpath)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    assert.equal(got, w, `record ${i}: ${argLines[i]}`);
    const k = lastOffsets.length - argRecords.length + i;
    const fields = js.fieldsOf(m, extra, lastOffsets[k]!, k);
    const rendered = Object.fromEntries(
      Object.entries(fields)
        .filter(([f]) => /^evt\.arg\.(pid|dirfd|res|linkpath)$/.test(f))
        .map(([f, v]) => [f.slice(8), v]),
    );
    assert.equal(rendered, w, `record ${i} rendered`);
  });
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

/** Rules reading the header constants and the process facts of sessions, login users and containers. */
const FACT_RULES = loadRules([
  {
    name: 'facts.yaml',
    text: [
      [
        'all',
        'proc.sname = sshd and proc.sid = 300 and proc.vpgid = 301 and user.loginname = root and container.name = host and thread.tid = 301 and evt.dir = "<" and evt.source = syscall and evt.hostname = "facts-host" and evt.is_open_exec = false and evt.rawtime = 1700000000000000005 and evt.time = "1700000000000000005"',
      ],
      ['sname login', 'proc.sname = login'],
      ['no sname', 'not proc.sname exists'],
      ['container name', 'container.name exists'],
      ['no loginname', 'not user.loginname exists'],
      ['leader', 'proc.sid = val(proc.pid)'],
      ['tid', 'thread.tid = 1101'],
      ['time', 'evt.time startswith "17" and evt.rawtime > 1700000000000000000'],
      ['cap admin', 'thread.cap_effective contains CAP_SYS_ADMIN and thread.cap_permitted icontains sys_module'],
      ['bind only', 'thread.cap_effective = CAP_NET_BIND_SERVICE and thread.cap_permitted = CAP_NET_BIND_SERVICE'],
      ['no inh', 'thread.cap_inheritable = ""'],
    ]
      .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type = openat and ${c}\n  output: x\n  priority: NOTICE\n`)
      .join(''),
  },
]).ruleset.rules;

/** A batch of the facts test: a session (leader 300 sshd, member 301, a container member 302, a thread of 101), opens, a leader exec, then its exit. */
function factBatches(): Array<{ bytes: Uint8Array; len: number }> {
  const snap = (pid: number, o: Partial<ProcSnapshot>) => ({ ...proc(pid, 1, 'x', ['x']), ...o });
  const open = (buf: Uint8Array, off: number, tid: number, ts: bigint) => syscallRecord(buf, off, { nr: syscallNr('openat')!, tid, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts', ts });
  const one = new Uint8Array(16384);
  let a = 0;
  a += encodeProcRecord(snap(300, { comm: Buffer.from('sshd'), args: [Buffer.from('sshd')], sid: 300, pgid: 300, loginuid: 4294967295 }), one, a, 1n);
  a += encodeProcRecord(snap(301, { ppid: 300, comm: Buffer.from('bash'), args: [Buffer.from('bash')], sid: 300, pgid: 301, loginuid: 0 }), one, a, 1n);
  a += encodeProcRecord(snap(302, { ppid: 301, comm: Buffer.from('nginx'), args: [Buffer.from('nginx')], sid: 300, pgid: 302, loginuid: 4000000000, cgroup: Buffer.from(`/system.slice/docker-${'cd'.repeat(32)}.scope`) }), one, a, 1n);
  a += encodeProcRecord(snap(101, { comm: Buffer.from('app'), args: [Buffer.from('app')], sid: 7, pgid: 101 }), one, a, 1n);
  const th = a;
  a += encodeProcRecord(snap(101, { comm: Buffer.from('app'), args: [] }), one, a, 1n);
  new DataView(one.buffer, th).setUint16(HDR.kind, KIND.FORK, true);
  new DataView(one.buffer, th).setUint32(HDR.tid, 1101, true);
  new DataView(one.buffer, th).setUint32(PROC.pflags, PF.THREAD, true);
  for (const tid of [301, 302, 300, 1101]) a += open(one, a, tid, 5n);
  // the leader execs: its members' proc.sname follows at once (the source cuts the batch before
  // an exec of a process with events earlier in it, as 300 has: source.ts batchBytes)
  const cut = a;
  // a member that opens and exits before the leader's exec (no cut: it judges as of the batch's end)
  a += encodeProcRecord(snap(303, { ppid: 300, comm: Buffer.from('cat'), args: [Buffer.from('cat')], sid: 300, pgid: 303 }), one, a, 1n);
  a += open(one, a, 303, 6n);
  a += exitRecord(one, a, 303);
  const ex = a;
  a += encodeProcRecord(snap(300, { comm: Buffer.from('login'), args: [Buffer.from('login')], sid: 300, pgid: 300 }), one, a, 1n);
  new DataView(one.buffer, ex).setUint16(HDR.kind, KIND.EXEC, true);
  for (const tid of [301, 300]) a += open(one, a, tid, 6n);
  a += exitRecord(one, a, 300);
  a += open(one, a, 301, 7n); // the leader is gone only after this batch (exits apply after the batch)
  const two = new Uint8Array(4096);
  let b = 0;
  for (const tid of [301, 302]) b += open(two, b, tid, 8n);
  return [
    { bytes: one, len: cut },
    { bytes: one.slice(cut, a), len: a - cut },
    { bytes: two, len: b },
  ];
}

test('kernel ingest: thread.tid, evt.time/rawtime/dir/source/hostname/is_open_exec and proc.sid/vpgid/sname, user.loginname, container.name judge as libsinsp has them, alike through the oracle and the C translator', async () => {
  const m = await compileAll(FACT_RULES);
  const epoch = 1_700_000_000_000_000_000n;
  const kinds = [new KernelIngest({ native: false, hostname: 'facts-host' }), ...(nativeTranslator() ? [new KernelIngest({ hostname: 'facts-host' })] : [])];
  const results: string[][] = [];
  for (const k of kinds) {
    const got: string[] = [];
    for (const b of factBatches()) {
      const offsets = k.ingest(m, b.bytes, b.len, epoch);
      const r = m.evaluateRecords('syscall', offsets.length, false);
      assert.ok(r.ok);
      if (r.ok) for (const x of r.matches) got.push(`${new DataView(b.bytes.buffer).getUint32(offsets[x.event]! + HDR.tid, true)}@${new DataView(b.bytes.buffer).getBigUint64(offsets[x.event]! + HDR.ts_ns, true)}:${x.rule.name}`);
    }
    results.push(got);
  }
  const got = results[0]!;
  // the values themselves (libsinsp's)
  for (const w of ['301@5:all', '301@5:time', '300@5:leader', '300@5:no loginname', '302@5:no loginname', '1101@5:tid', '301@6:sname login', '300@6:sname login', '301@7:sname login', '303@6:sname login', '301@8:no sname', '302@8:no sname'])
    assert.ok(got.includes(w), `${w} in ${got.join(' ')}`);
  for (const w of ['302@5:container name', '302@5:all', '301@6:all', '301@5:no loginname', '1101@5:leader']) assert.not.ok(got.includes(w), w);
  // thread.cap_*: proc() gives pids divisible by 3 every capability, others CAP_NET_BIND_SERVICE; 301 (7 x 43) inherits it too; a thread (FORK) carries its own record's sets
  for (const w of ['300@5:cap admin', '300@6:cap admin', '303@6:cap admin', '301@5:bind only', '302@5:bind only', '1101@5:bind only', '300@5:no inh', '302@5:no inh', '1101@5:no inh']) assert.ok(got.includes(w), `${w} in ${got.join(' ')}`);
  for (const w of ['301@5:cap admin', '300@5:bind only', '301@5:no inh']) assert.not.ok(got.includes(w), w);
  if (results.length > 1) assert.equal(results[1], results[0], 'native and JS translators judge alike');
});

/** Rules reading container.start_ts and container.duration (the container's pid-namespace init, libsinsp's pidns_init_start_ts). */
const START_RULES = loadRules([
  {
    name: 'start.yaml',
    text: [
      ['started', 'container.start_ts = 1700000000000001000 and container.duration = 4000'],
      ['no start', 'not container.start_ts exists and not container.duration exists'],
      ['host start', 'container.name = host and container.start_ts = 1700000000000000010'],
    ]
      .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type = openat and ${c}\n  output: start=%container.start_ts duration=%container.duration\n  priority: NOTICE\n`)
      .join(''),
  },
]).ruleset.rules;

test('kernel ingest: container.start_ts is the start of the pid-namespace init, container.duration the event time minus it, alike through the oracle and the C translator', async () => {
  const m = await compileAll(START_RULES);
  const epoch = 1_700_000_000_000_000_000n;
  const id = 'ab'.repeat(32);
  const cgroup = Buffer.from(`/system.slice/docker-${id}.scope`);
  const snap = (pid: number, o: Partial<ProcSnapshot>) => ({ ...proc(pid, 1, 'x', ['x']), ...o });
  const open = (buf: Uint8Array, off: number, tid: number, ts: bigint) => syscallRecord(buf, off, { nr: syscallNr('openat')!, tid, ret: 3n, args: [0n, 0n, 0n, 0n, 0n, 0n], path: '/etc/hosts', ts });
  const buf = new Uint8Array(8192);
  let a = 0;
  // the host's init, then a container process seen before its namespace's init (a /proc bootstrap
  // in pid order need not give the init first), then the init (vpid 1), then a process of a second
  // container whose namespace init was never seen
  a += encodeProcRecord(snap(1, { comm: Buffer.from('systemd'), vpid: 1, pidns: 4026531836, startNs: 10n, cgroup: Buffer.from('/init.scope') }), buf, a, 1n);
  a += encodeProcRecord(snap(401, { ppid: 400, vpid: 7, pidns: 4026532400, startNs: 2000n, cgroup }), buf, a, 1n);
  a += encodeProcRecord(snap(400, { vpid: 1, pidns: 4026532400, startNs: 1000n, cgroup }), buf, a, 1n);
  a += encodeProcRecord(snap(500, { vpid: 3, pidns: 4026532500, startNs: 3000n, cgroup: Buffer.from(`/system.slice/docker-${'cd'.repeat(32)}.scope`) }), buf, a, 1n);
  for (const tid of [401, 400, 500, 1]) a += open(buf, a, tid, 5000n);
  const kinds = [new KernelIngest({ native: false }), ...(nativeTranslator() ? [new KernelIngest({})] : [])];
  const results: string[][] = [];
  for (const k of kinds) {
    // the runtime's own start time (its record) is not container.start_ts
    k.containers.learn(containerRecord(id, { name: 'web', image: 'i', imageRepository: 'i', startTs: 42n }));
    const offsets = k.ingest(m, buf, a, epoch);
    const r = m.evaluateRecords('syscall', offsets.length, false);
    assert.ok(r.ok);
    const got = r.ok ? r.matches.map((x) => `${new DataView(buf.buffer).getUint32(offsets[x.event]! + HDR.tid, true)}:${x.rule.name}`) : [];
    // the oracle (the interpreter on the decoded fields) and the alert output fields agree
    const interp = new Interpreter();
    const want: string[] = [];
    offsets.forEach((off, i) => {
      const fields = k.fieldsOf(m, buf, off, i);
      const ev = new FieldEvent(fields, { source: 'syscall', timeNs: 0n, num: BigInt(i + 1) });
      for (const rule of START_RULES) if (interp.evaluate(rule.condition, ev)) want.push(`${fields['thread.tid']}:${rule.name}`);
      if (fields['thread.tid'] === 401) {
        assert.is(fields['container.start_ts'], epoch + 1000n);
        assert.is(fields['container.duration'], 4000);
      }
    });
    assert.equal(got.sort(), want.sort());
    results.push(got);
  }
  assert.equal(results[0], ['1:host start', '400:started', '401:started', '500:no start']);
  if (results.length > 1) assert.equal(results[1], results[0], 'native and JS translators judge alike');
});

test.run();
