// Alert output fields of kernel events come from the bytes the translator writes: on a stored
// recording of real kernel records (test/fixtures/kernel/output-fields.bin, its process records
// widened from ABI 5 to 6 with no environment, and to 8 with no exe inode times (0: ctime and mtime
// missing, the duration libsinsp's clone_ts - 0), the golden's record offsets moved with them and
// only the fields of ABI 8 (proc.exe_ino.*, evt.args) added to it: a bash script's opens, unlinkat,
// linkat, fchmodat, socket/connect/accept/sendto over IPv4, IPv6, unix, netlink and packet
// sockets, ptrace, setuid, execve; the /proc snapshot of the test process),
// every field fieldsOf renders for every event is compared with the golden file
// (test/golden/kernel/output-fields.json), which the TypeScript derivation of the fields
// (kernelEventFields before it read eval records) wrote from the same recording: every value
// must be the same as alerts read it, but where that derivation departed from libsinsp (LIBSINSP
// below). And the C translator writes every field of every event as the TypeScript one does.
//   RAE_RECORD=1 records a new fixture (needs the probe); UPDATE_GOLDEN=1 rewrites the golden.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { FieldEvent } from '../../../host/engine/field-event.js';
import { HDR, KIND, PROC, SYSCALL } from '../../../host/abi/records.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { decodeRecord } from '../../helpers/record-decoder.js';
import { KERNEL_RECORD_FIELDS } from '../../../host/sources/syscall/fields.js';
import { compileAll } from '../../../support/differential.js';
import { syscallNr } from '../../../host/sources/syscall/syscalls.js';
import { batchPieces, recordKernel, translatorsPass, twin } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const FIXTURE = new URL('../../fixtures/kernel/output-fields.bin', import.meta.url);
const GOLDEN = new URL('../../golden/kernel/output-fields.json', import.meta.url);
const TYPES = ['open', 'openat', 'creat', 'unlinkat', 'linkat', 'fchmodat', 'socket', 'connect', 'accept', 'accept4', 'sendto', 'bind', 'ptrace', 'setuid', 'execve', 'mkdirat', 'renameat2', 'symlinkat'];

// one Python process: sockets of every family, a TCP connection over loopback (connect, accept),
// a UDP datagram, failing ptrace calls, setuid to its own uid
const PY = [
  'import socket, os, ctypes',
  'srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)',
  'c = socket.create_connection(srv.getsockname()); a, _ = srv.accept()',
  'u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"x", ("127.0.0.1", 9))',
  'try:\n  s6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s6.sendto(b"x", ("::1", 9))\nexcept OSError: pass',
  'un = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
  'nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)',
  'try: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)\nexcept OSError: pass',
  'try: socket.socket(12345, socket.SOCK_STREAM)\nexcept OSError: pass',
  'ctypes.CDLL(None, use_errno=True).syscall(101, 2, 4194309, 0, 0)',
  'os.setuid(os.getuid())',
].join('\n');

/**
 * The records of the script's process tree (at most 3 SYSCALL records per syscall, result, open
 * flags and socket domain and type: python's many module opens differ only in their paths) and
 * the /proc snapshot of this process.
 */
function ownRecords(buf: Uint8Array, fill: number, root: number): Uint8Array {
  const dv = new DataView(buf.buffer, buf.byteOffset);
  const tree = new Set([root]);
  const seen = new Map<string, number>();
  const parts: Uint8Array[] = [];
  for (let off = 0; off < fill; off += dv.getUint32(off + HDR.len, true)) {
    const kind = dv.getUint16(off + HDR.kind, true);
    const pid = dv.getUint32(off + HDR.pid, true);
    if (kind === KIND.FORK && tree.has(dv.getUint32(off + PROC.ppid, true))) tree.add(pid);
    if (kind === KIND.SYSCALL && tree.has(pid)) {
      const ret = dv.getBigInt64(off + HDR.ret, true);
      const nr = dv.getUint16(off + HDR.nr, true);
      const arg = (i: number) => dv.getUint32(off + SYSCALL.args + 8 * i, true);
      const key = `${nr} ${ret < 0n ? ret : 'ok'} ${nr === syscallNr('openat') ? arg(2) : nr === syscallNr('socket') ? `${arg(0)} ${arg(1)}` : ''}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      if (seen.get(key)! > 3) continue;
    }
    if ((kind === KIND.PROC && pid === process.pid) || (kind !== KIND.PROC && tree.has(pid))) parts.push(buf.subarray(off, off + dv.getUint32(off + HDR.len, true)));
  }
  return new Uint8Array(Buffer.concat(parts));
}

function record(): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'rae-outputs-'));
  let root = 0;
  try {
    const rec = recordKernel(TYPES, () => {
      const script = [
        'set -e',
        'echo $$',
        `cd ${dir}`,
        'cat /etc/hostname > f',
        'ls . > /dev/null',
        'mkdir d',
        'ln f d/l',
        'ln -s f sl',
        'mv sl sl2',
        'chmod u+s f',
        'rm d/l sl2',
        'rmdir d',
        'cat missing-file 2> /dev/null || true',
        `python3 -c "${PY.replace(/"/g, '\\"')}"`,
      ].join('\n');
      root = Number(execFileSync('/bin/bash', ['-c', script], { encoding: 'utf8' }).split('\n')[0]);
    });
    return ownRecords(rec.buf, rec.fill, root);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Values as JSON text (bigints as "<n>n"). */
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));

/** Every event of the recording rendered by fieldsOf, in record order: [record offset, fields as JSON]. */
async function rendered(buf: Uint8Array): Promise<Array<[number, Record<string, unknown>]>> {
  const rules = loadRules([{ name: 'r.yaml', text: '- rule: any open\n  desc: d\n  condition: evt.type = openat and fd.name exists\n  output: "%fd.name"\n  priority: NOTICE\n' }]).ruleset.rules;
  const m = twin(await compileAll(rules));
  const ki = new KernelIngest({ native: false, hostname: 'h' });
  const out: Array<[number, Record<string, unknown>]> = [];
  for (const [from, to] of batchPieces(buf, buf.length)) {
    const view = buf.subarray(from, to);
    const offsets = ki.ingest(m, view, to - from, 0n);
    offsets.forEach((o, i) => out.push([from + o, JSON.parse(text(ki.fieldsOf(m, view, o, i))) as Record<string, unknown>]));
  }
  return out;
}

if (process.env.RAE_RECORD === '1') writeFileSync(FIXTURE, record());
const buf = existsSync(FIXTURE) ? new Uint8Array(readFileSync(FIXTURE)) : new Uint8Array(0);
if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, `{\n${(await rendered(buf)).map(([o, f]) => `${JSON.stringify(String(o))}: ${JSON.stringify(f)}`).join(',\n')}\n}\n`);

/**
 * Where kernelEventFields departed from libsinsp, which conditions and outputs now both follow:
 * the value libsinsp gives, from the event's record. evt.arg.flags is the open flags of opens and
 * the AT_* flags of unlinkat/linkat; no other syscall the probe records has a `flags` parameter in
 * libsinsp's event table but execve/execveat (execve_flags: the names of the new image's
 * EXE_WRITABLE, EXE_UPPER_LAYER, EXE_FROM_MEMFD, EXE_LOWER_LAYER, as the golden's proc.is_exe_* of
 * the same event say; "0" for none), so the derivation's decimal of an argument (a pointer, socket(2)'s type,
 * fchmodat's mode) is gone. fd.type/fd.typechar of socket(2): libsinsp's add_socket types
 * the new socket by its domain (unix, ipv4, ipv6, netlink; any other is SCAP_FD_UNKNOWN: 'o' and
 * "<NA>"), and a failed call makes no socket (the derivation said 'o'/"unknown" for both).
 * proc.env, which the derivation did not give: the recording predates the probe's environment
 * capture (its process records were widened to ABI 6 with no environment), and libsinsp's
 * concatenate_all_env of a process without variables is "". proc.is_exe_lower_layer, newer than
 * the golden: false wherever the golden has proc.is_exe_upper_layer (the same overlay check; no
 * executable of the recording is on an overlayfs).
 */
const LIBSINSP: Record<string, (type: string, rec: DataView, want: Record<string, unknown>) => unknown> = {
  'evt.arg.flags': (type, _rec, want) => {
    if (type === 'execve') {
      const set = (['writable', 'upper_layer', 'from_memfd', 'lower_layer'] as const).filter((k) => want[`proc.is_exe_${k}`] === true);
      return set.map((k) => `EXE_${k.toUpperCase()}`).join('|') || '0';
    }
    return ['open', 'openat', 'openat2', 'creat', 'unlinkat', 'linkat'].includes(type) ? KEEP : undefined;
  },
  'fd.typechar': (type, rec) => (type !== 'socket' ? KEEP : socketType(rec)?.[0]),
  'fd.type': (type, rec) => (type !== 'socket' ? KEEP : socketType(rec)?.[1]),
  'proc.env': () => '',
  'proc.is_exe_lower_layer': (_type, _rec, want) => (want['proc.is_exe_upper_layer'] === undefined ? undefined : false),
};
const KEEP = Symbol('the golden value');

/**
 * A successful bind, or a listen, of an IP socket with a local port makes libsinsp's server socket
 * (parsers.cpp parse_bind_exit; libsinsp's net_bind_listen_accept_ipv4 test): the bound end is the
 * server (fd.sip/fd.sport, fd.name "addr:port"), there is no client, local or remote end, and
 * fd.ip/fd.net/fd.port hold the bound end only. The derivation gave the unset peer 0.0.0.0:0.
 */
function serverSocketFields(type: string, at: number): Record<string, unknown> | undefined {
  const r = decodeRecord(buf, at);
  if ('code' in r || r.kind !== KIND.SYSCALL || !(type === 'listen' || (type === 'bind' && r.ret >= 0))) return undefined;
  const { family, addr, port } = r.local;
  if ((family !== 2 && family !== 10) || port === 0) return undefined;
  const name = `${addr}:${port}`;
  const none = ['fd.cip', 'fd.lip', 'fd.rip', 'fd.cport', 'fd.lport', 'fd.rport', 'fd.cnet', 'fd.lnet', 'fd.rnet'].map((k) => [k, undefined]);
  return { ...Object.fromEntries(none), 'fd.sip': addr, 'fd.sport': port, 'fd.snet': addr, 'fd.name': name, 'fd.nameraw': name, 'fd.ip': [addr], 'fd.net': [addr], 'fd.port': [port] };
}
function socketType(rec: DataView): readonly [string, string] | undefined {
  if (rec.getBigInt64(HDR.ret, true) < 0n) return undefined;
  return ({ 1: ['u', 'unix'], 2: ['4', 'ipv4'], 10: ['6', 'ipv6'], 16: ['n', 'netlink'] } as const)[rec.getUint32(SYSCALL.args, true)] ?? ['o', '<NA>'];
}

test('output fields: every field of every recorded event renders from the eval record bytes as the golden says, but where libsinsp says otherwise', async () => {
  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, Record<string, unknown>>;
  const got = await rendered(buf);
  assert.ok(got.length >= 40, `only ${got.length} events in the fixture`);
  assert.equal(
    got.map(([o]) => String(o)),
    Object.keys(golden),
  );
  const diffs: string[] = [];
  let compared = 0;
  for (const [o, fields] of got) {
    const want = golden[o]!;
    const type = String(want['evt.type']);
    const rec = new DataView(buf.buffer, buf.byteOffset + o);
    const server = serverSocketFields(type, Number(o));
    // as alerts read them (FieldEvent: fd.ip, fd.snet... derived from the endpoints when absent)
    const [w, g] = [want, fields].map((f) => new FieldEvent(f, { source: 'syscall', timeNs: 0n, num: 1n }));
    for (const k of new Set([...Object.keys(want), ...Object.keys(fields)])) {
      const ref = fieldRef(k);
      const libsinsp = LIBSINSP[k];
      const rule = server && k in server ? server[k] : libsinsp ? libsinsp(type, rec, want) : KEEP;
      const expected = rule === KEEP ? w.field(ref) : rule;
      compared++;
      if (text(expected) !== text(g.field(ref))) diffs.push(`${o} ${type} ${k}: ${text(expected)} -> ${text(g.field(ref))}`);
    }
  }
  assert.equal(diffs, []);
  assert.ok(compared > 2000, `${compared} values compared`);
});

test('output fields: the C translator writes every field of every recorded event as the TypeScript one (conditions read what alerts print)', async () => {
  const generic = new Set(['evt.num', 'evt.time', 'evt.rawtime', 'evt.source']);
  const fields = KERNEL_RECORD_FIELDS.filter((f) => !generic.has(f));
  const rule = `- rule: every field\n  desc: d\n  condition: evt.type != close and (${fields.map((f) => `${f} exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n`;
  const m = await compileAll(loadRules([{ name: 'all.yaml', text: rule }]).ruleset.rules);
  const pass = translatorsPass({ buf, fill: buf.length, epochNs: 0n }, m);
  assert.equal(pass.slots.filter((s) => fields.includes(s)).sort(), [...fields].sort());
  assert.is(pass.native.length, pass.oracle.length);
  assert.equal(
    pass.native.filter((r, i) => r !== pass.oracle[i]),
    [],
  );
});

test.run();
