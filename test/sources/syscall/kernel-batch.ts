// Kernel wire records for the kernel ingest tests (ingest*.test.ts): /proc snapshots whose facts
// vary with the pid (ids, tty, capabilities, environment), SYSCALL and EXIT records with every
// part of a record settable, and seeded batches of a process tree and thousands of syscalls drawn
// from the values the upstream rules compare (support/differential.ts collectPools).
import { EXIT, HDR, KIND, PF, PROC, SIZES, SYSCALL, XF } from '../../../host/abi/records.js';
import { loadRules } from '../../../host/engine/index.js';
import { encodeProcRecord, type ProcSnapshot } from '../../../host/sources/syscall/procfs.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { corpusText } from '../../../support/corpus.js';
import { collectPools } from '../../../support/differential.js';
import { procInfo } from '../../../support/kernel-records.js';

/** The upstream stable and incubating rules, the batches' source of syscalls, names and paths. */
export const rules = loadRules(['falco_rules.yaml', 'falco-incubating_rules.yaml'].map((n) => ({ name: n, text: corpusText(n) }))).ruleset.rules;
const pools = collectPools(rules);
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Environments by pid (proc.env[NAME]: blanks to strip, a value holding a blank and NAME=, an empty value before the real one, none at all). */
const ENVS = [undefined, 'HOME=/root\0HTTP_PROXY= http://p.invalid:1 \0LANG=C', 'X=a HTTP_PROXY=no\0HTTP_PROXY=\0HTTP_PROXY=second', 'GLIBC_TUNABLES=glibc.malloc.mxfast=0', ''].map((e) => (e === undefined ? undefined : Buffer.from(e)));

/** The /proc snapshot of a process whose ids, tty, capabilities and environment follow from its pid. */
export function proc(pid: number, ppid: number, comm: string, args: string[], cgroup = '/user.slice'): ProcSnapshot {
  return procInfo(pid, ppid, comm, {
    euid: pid % 3 === 0 ? 0 : 1000,
    loginuid: pid % 2 ? 4294967295 : 1000,
    tty: pid % 5 === 0 ? 34816 : 0,
    exeWritable: pid % 4 === 0,
    // root-like sets for euid 0, CAP_NET_BIND_SERVICE alone otherwise, an empty inheritable set but for every 7th
    capInheritable: pid % 7 === 0 ? 0x400n : 0n,
    capPermitted: pid % 3 === 0 ? 0x1ffffffffffn : 0x400n,
    capEffective: pid % 3 === 0 ? 0x1ffffffffffn : 0x400n,
    args: args.map((a) => Buffer.from(a)),
    cwd: Buffer.from('/root'),
    cgroup: Buffer.from(cgroup),
    env: ENVS[pid % ENVS.length],
  });
}

/** A RAE_KIND_SYSCALL record. */
export function syscallRecord(
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

/** The EXIT record of a process's last thread. */
export function exitRecord(out: Uint8Array, off: number, pid: number): number {
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
export function batch(seed: number, n: number, withProcs = true): { bytes: Uint8Array; len: number } {
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
