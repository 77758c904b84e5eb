// Record decoder on hand-built batches: walking, every record kind, socket address text
// (IPv4, IPv6 with RFC 5952 compression, v4-mapped), and malformed input reported as values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { abi, syscallIds, syscallName, syscallNr } from '../../../host/sources/syscall/index.js';
import { decodeBatch, decodeRecord, forEachRecord, type SyscallRecord } from '../../helpers/record-decoder.js';

const { HDR, SYSCALL, SOCKADDR, KIND, SIZES, EXIT } = abi;

/** A syscall record with a path string and a peer address. */
function syscallRecord(nr: number, ret: bigint, path: string, peer?: { family: number; port: number; addr: number[] }): Uint8Array {
  const bytes = Buffer.from(path);
  const len = (SIZES.syscall + bytes.length + 1 + 7) & ~7;
  const view = new Uint8Array(len);
  const dv = new DataView(view.buffer);
  dv.setUint32(HDR.len, len, true);
  dv.setUint16(HDR.kind, KIND.SYSCALL, true);
  dv.setUint16(HDR.nr, nr, true);
  dv.setUint32(HDR.pid, 42, true);
  dv.setUint32(HDR.tid, 43, true);
  dv.setBigInt64(HDR.ret, ret, true);
  dv.setBigUint64(SYSCALL.args + 8, 0xdeadbeefn, true);
  view.set(bytes, SIZES.syscall);
  dv.setUint16(SYSCALL.path, SIZES.syscall, true);
  dv.setUint16(SYSCALL.path + 2, bytes.length, true);
  if (peer) {
    dv.setUint16(SYSCALL.peer + SOCKADDR.family, peer.family, true);
    dv.setUint16(SYSCALL.peer + SOCKADDR.port, peer.port, true);
    view.set(peer.addr, SYSCALL.peer + SOCKADDR.addr);
  }
  return view;
}

function exitRecord(code: number): Uint8Array {
  const view = new Uint8Array(SIZES.exit);
  const dv = new DataView(view.buffer);
  dv.setUint32(HDR.len, SIZES.exit, true);
  dv.setUint16(HDR.kind, KIND.EXIT, true);
  dv.setBigInt64(HDR.ret, BigInt(code), true);
  dv.setUint32(EXIT.xflags, abi.XF.GROUP_DEAD, true);
  return view;
}

const cat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

test('a batch of several kinds walks and decodes in order', () => {
  const batch = cat(syscallRecord(syscallNr('openat')!, 3n, '/etc/shadow'), exitRecord(256), syscallRecord(syscallNr('unlink')!, -2n, 'x'));
  const seen: number[] = [];
  assert.is(
    forEachRecord(batch, batch.length, (_off, _len, kind) => seen.push(kind)),
    batch.length,
  );
  assert.equal(seen, [KIND.SYSCALL, KIND.EXIT, KIND.SYSCALL]);
  const { records, error } = decodeBatch(batch, batch.length);
  assert.is(error, undefined);
  const open = records[0] as SyscallRecord;
  assert.equal([open.name, open.ret, open.path, open.pid, open.tid, open.args[1]], ['openat', 3, '/etc/shadow', 42, 43, 0xdeadbeefn]);
  assert.equal([open.path2, open.dir, open.peer.family], [undefined, undefined, 0]);
  assert.equal(records[1], { ...records[1], kind: KIND.EXIT, exitCode: 256, xflags: 1 });
  assert.equal([(records[2] as SyscallRecord).name, (records[2] as SyscallRecord).ret], ['unlink', -2]);
});

test('socket addresses: IPv4, IPv6 compressed, v4-mapped', () => {
  const cases: [number, number[], string][] = [
    [abi.AF.INET, [10, 1, 2, 3], '10.1.2.3'],
    [abi.AF.INET6, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], '::1'],
    [abi.AF.INET6, [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1], '2001:db8::1:0:0:1'],
    [abi.AF.INET6, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1], '::ffff:127.0.0.1'],
    [abi.AF.UNIX, [], ''],
  ];
  for (const [family, addr, text] of cases) {
    const r = decodeRecord(syscallRecord(syscallNr('connect')!, 0n, '', { family, port: 8080, addr }), 0) as SyscallRecord;
    assert.equal(r.peer, { family, port: 8080, addr: text });
  }
});

test('malformed batches are reported, never thrown', () => {
  const good = syscallRecord(syscallNr('openat')!, 3n, '/a');
  const badLen = good.slice();
  new DataView(badLen.buffer).setUint32(HDR.len, 13, true);
  assert.equal(decodeBatch(badLen, badLen.length).error?.code, 'EBADLEN');
  const past = cat(good, good.subarray(0, 60));
  const r = decodeBatch(past, past.length);
  assert.equal([r.records.length, r.error?.code, r.error?.offset], [1, 'EBADLEN', good.length]);
  const badKind = good.slice();
  new DataView(badKind.buffer).setUint16(HDR.kind, 9, true);
  assert.equal(decodeBatch(badKind, badKind.length).error?.code, 'EBADKIND');
  const badStr = good.slice();
  new DataView(badStr.buffer).setUint16(SYSCALL.path, good.length - 1, true);
  const e = decodeBatch(badStr, badStr.length).error;
  assert.is(e?.code, 'EBADSTR');
  assert.match(e!.message, /runs past the record/);
});

test('syscall names: table lookups both ways, unknown names reported', () => {
  assert.equal([syscallNr('execve'), syscallNr('openat2'), syscallNr('fchmodat2'), syscallNr('nope')], [59, 437, 452, undefined]);
  assert.equal([syscallName(257), syscallName(1000), syscallName(-1)], ['openat', '', '']);
  assert.equal(syscallIds(['openat', 'execve', 'openat', 'frobnicate']), { ids: [59, 257], unknown: ['frobnicate'] });
});

test.run();
