// The header and process fields users' own rules read (thread.tid, evt.time, evt.rawtime,
// evt.dir, evt.source, evt.hostname, evt.is_open_exec, proc.sid, proc.vpgid, proc.sname,
// user.loginname, container.name) on real kernel records, byte path against objects path: a
// shell started by setsid (a session leader) opens marker files itself and through children. The
// captured records are cut into pieces as `rae run`'s byte path cuts them (source.ts batchBytes:
// before an exec of a process with events earlier in the piece) and each piece is judged the way
// each path judges a batch (process records applied, then the events evaluated, then exits
// dropped). Every field of every event must render the same (KernelIngest.fieldsOf against
// SyscallEvent), and a compiled rule built from the objects path's values of each marker event
// must match that event on the byte path (the eval record slots and the thread entry).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../../host/engine/index.js';
import { lookupField } from '../../../host/engine/fields/index.js';
import { Interpreter, type RawValue } from '../../../host/engine/interpreter.js';
import type { FieldRef } from '../../../host/engine/ir.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/sources/syscall/abi.js';
import { SyscallEvent } from '../../../host/sources/syscall/event.js';
import { compileAll } from '../../runtime/differential-helpers.js';
import { kernelGate } from './collector.js';
import { bytesPass, objectsPass, recordKernel, type Recording } from './recording.js';

const gate = kernelGate('session.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['thread.tid', 'evt.time', 'evt.rawtime', 'evt.dir', 'evt.source', 'evt.hostname', 'evt.is_open_exec', 'proc.sid', 'proc.vpgid', 'proc.sname', 'user.loginname', 'container.name'];
const HOST = 'session-test-host';

const ref = (name: string): FieldRef => {
  const def = lookupField('syscall', name)!;
  return { kind: 'field', def, canonical: name, type: def.type, isList: false };
};

/** A condition literal for a field value. */
function literal(v: RawValue): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

run_('session: thread.tid, evt.time/rawtime/dir/source/hostname/is_open_exec, proc.sid/vpgid/sname, user.loginname and container.name agree on both paths for a real setsid shell', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-session-'));
  let rec: Recording;
  try {
    for (const f of ['m1', 'm2', 'm3']) writeFileSync(join(dir, f), f);
    // bash leads a new session: it opens m1 itself, a child cat opens m2, then it execs into cat m3
    rec = recordKernel(['openat', 'open'], () => execFileSync('setsid', ['-w', '/bin/bash', '-c', `read x < ${dir}/m1; /bin/cat ${dir}/m2 > /dev/null; exec /bin/cat ${dir}/m3`], { stdio: 'ignore' }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const { buf, epochNs: epoch } = rec;
  const dv = new DataView(buf.buffer);
  const refs = FIELDS.map(ref);
  // the objects path, piece by piece (field values, and the rules when given)
  const interp = new Interpreter();
  const judgeObjects = (rules: readonly LoadedRule[]) => {
    const objects = new Map<number, { type: string; values: Array<RawValue | undefined>; ev: SyscallEvent; matched: string[] }>();
    objectsPass(rec, HOST, (off, ev) => objects.set(off, { type: ev.type, values: refs.map((r) => ev.field(r)), ev, matched: rules.filter((r) => interp.evaluate(r.condition, ev)).map((r) => r.name) }));
    return objects;
  };
  const objects = judgeObjects([]);
  // the marker opens and a rule per marker from the objects path's values
  const markers = [...objects].filter(([, o]) => ['m1', 'm2', 'm3'].some((f) => o.ev.field(ref('fd.name')) === join(dir, f)));
  assert.is(markers.length, 3, `marker opens: ${markers.map(([, o]) => o.ev.field(ref('fd.name'))).join(' ')}`);
  const rulesText = markers.map(([, o], k) => {
    const parts = FIELDS.map((f, j) => (o.values[j] === undefined ? `not ${f} exists` : `${f} = ${literal(o.values[j]!)}`));
    return `- rule: marker ${k}\n  desc: d\n  condition: evt.type = ${o.type} and ${parts.join(' and ')}\n  output: x\n  priority: NOTICE\n`;
  }).join('');
  const loaded = loadRules([{ name: 'markers.yaml', text: rulesText }]);
  assert.ok(loaded.ok, rulesText);
  const m = await compileAll(loaded.ruleset.rules);
  const judged = judgeObjects(loaded.ruleset.rules);
  // the byte path, the same pieces: matches and rendered fields
  const diffs: string[] = [];
  let events = 0;
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: HOST }), (off, bytes) => {
    const obj = objects.get(off)!;
    refs.forEach((rf, j) => {
      const b = bytes.field(rf);
      if (obj.values[j] !== b) diffs.push(`${obj.type} ${rf.canonical}: objects ${String(obj.values[j])}, bytes ${String(b)} (pid ${dv.getUint32(off + HDR.pid, true)} ${String(obj.ev.field(ref('proc.name')))} ${String(obj.ev.field(ref('fd.name')))})`);
    });
    events++;
  });
  assert.equal([...new Set(diffs)].slice(0, 20), []);
  assert.ok(events >= 3, `${events} events`);
  markers.forEach(([off, o], k) => {
    assert.equal(judged.get(off)!.matched, [`marker ${k}`], `marker ${k} on the objects path (${o.type})`);
    assert.equal(matched.get(off), [`marker ${k}`], `marker ${k} on the byte path`);
  });
  // the values: bash leads the session every marker open belongs to; m3 is opened by the leader itself after its exec
  const v = (k: number, f: string) => markers[k]![1].values[FIELDS.indexOf(f)];
  const pidOf = (k: number) => dv.getUint32(markers[k]![0] + HDR.pid, true);
  assert.is(v(0, 'proc.sid'), pidOf(0), 'bash is its session leader');
  assert.is(v(0, 'proc.sname'), 'bash');
  assert.is(v(1, 'proc.sid'), pidOf(0));
  assert.ok(v(1, 'proc.sname') === 'bash' || v(1, 'proc.sname') === 'cat', String(v(1, 'proc.sname')));
  assert.is(v(2, 'proc.sname'), 'cat', 'the leader after its exec');
  assert.is(v(1, 'thread.tid'), pidOf(1));
  assert.is(v(0, 'evt.dir'), '<');
  assert.is(v(0, 'evt.source'), 'syscall');
  assert.is(v(0, 'evt.hostname'), HOST);
  assert.is(v(0, 'evt.is_open_exec'), false);
  assert.is(String(v(0, 'evt.rawtime')), String(dv.getBigUint64(markers[0]![0] + HDR.ts_ns, true) + epoch));
});

test.run();
