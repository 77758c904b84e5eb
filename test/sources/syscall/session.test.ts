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
import { KernelIngest } from '../../../host/runtime/kernel-ingest.js';
import { FieldEvent } from '../../../host/sources/field-event.js';
import { HDR, KIND } from '../../../host/sources/syscall/abi.js';
import { SyscallEvent } from '../../../host/sources/syscall/event.js';
import { ProcessTable } from '../../../host/sources/syscall/state.js';
import { syscallName } from '../../../host/sources/syscall/syscalls.js';
import { UserNames } from '../../../host/sources/syscall/users.js';
import { compileAll } from '../../runtime/differential-helpers.js';
import { kernelGate } from './collector.js';
import { batchPieces, recordKernel, type Recording } from './recording.js';

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
  const { buf, fill, epochNs: epoch } = rec;
  const dv = new DataView(buf.buffer);
  const refs = FIELDS.map(ref);
  const cuts = batchPieces(buf, fill);
  // the objects path: each piece's events built while its process records apply, judged after
  // (field values, and the rules when given), exits dropped
  const interp = new Interpreter();
  const objectsPass = (rules: readonly LoadedRule[]) => {
    const table = new ProcessTable();
    const ctx = { table, names: new UserNames(), hostname: HOST };
    const objects = new Map<number, { type: string; values: Array<RawValue | undefined>; ev: SyscallEvent; matched: string[] }>();
    let num = 0;
    for (const [from, to] of cuts) {
      const evs: Array<[number, SyscallEvent]> = [];
      for (let off = from; off < to; off += dv.getUint32(off + HDR.len, true)) {
        const kind = dv.getUint16(off + HDR.kind, true);
        if (kind !== KIND.SYSCALL) {
          table.apply(buf, dv, off, kind);
          continue;
        }
        const type = syscallName(dv.getUint16(off + HDR.nr, true));
        const ts = dv.getBigUint64(off + HDR.ts_ns, true);
        evs.push([off, new SyscallEvent(ctx, buf, dv, off, type, table.get(dv.getUint32(off + HDR.pid, true)), ts + epoch, ++num)]);
      }
      for (const [off, ev] of evs) objects.set(off, { type: ev.type, values: refs.map((r) => ev.field(r)), ev, matched: rules.filter((r) => interp.evaluate(r.condition, ev)).map((r) => r.name) });
      table.flushExits();
    }
    return objects;
  };
  const objects = objectsPass([]);
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
  const judged = objectsPass(loaded.ruleset.rules);
  // the byte path, piece by piece: matches and rendered fields
  const ki = new KernelIngest({ hostname: HOST });
  const matched = new Map<number, string[]>();
  const diffs: string[] = [];
  let events = 0;
  for (const [from, to] of cuts) {
    const view = buf.subarray(from, to);
    const offsets = ki.ingest(m, view, to - from, epoch);
    const r = m.evaluateRecords('syscall', offsets.length, false);
    assert.ok(r.ok);
    if (r.ok) for (const x of r.matches) matched.set(from + offsets[x.event]!, [...(matched.get(from + offsets[x.event]!) ?? []), x.rule.name]);
    offsets.forEach((o, i) => {
      const obj = objects.get(from + o)!;
      const ts = new DataView(view.buffer, view.byteOffset + o).getBigUint64(HDR.ts_ns, true);
      const bytes = new FieldEvent(ki.fieldsOf(m, view, o, i), { source: 'syscall', timeNs: ts + epoch, num: 1n });
      refs.forEach((rf, j) => {
        const b = bytes.field(rf);
        if (obj.values[j] !== b) diffs.push(`${obj.type} ${rf.canonical}: objects ${String(obj.values[j])}, bytes ${String(b)} (pid ${dv.getUint32(from + o + HDR.pid, true)} ${String(obj.ev.field(ref('proc.name')))} ${String(obj.ev.field(ref('fd.name')))} piece ${from})`);
      });
      events++;
    });
  }
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
