// The header and process fields users' own rules read (thread.tid, evt.time, evt.rawtime,
// evt.dir, evt.source, evt.hostname, evt.is_open_exec, proc.sid, proc.vpgid, proc.sname,
// user.loginname, container.name) on real kernel records, the C translator against the oracle: a
// shell started by setsid (a session leader) opens marker files itself and through children. The
// captured records are cut into pieces as `rae run`'s byte path cuts them (source.ts batchBytes:
// before an exec of a process with events earlier in the piece) and each piece is judged the way
// the source judges a batch (process records applied, then the events evaluated). A compiled rule
// built from the oracle's values of each marker event (ingest.ts with `native: false`, its
// fieldsOf) must match that event through the C translator and through the oracle, both must
// write the same eval records, and every field must render the same.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../../host/engine/index.js';
import type { FieldEvent } from '../../../host/engine/field-event.js';
import type { RawValue } from '../../../host/engine/interpreter.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { HDR } from '../../../host/abi/records.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('session.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['thread.tid', 'evt.time', 'evt.rawtime', 'evt.dir', 'evt.source', 'evt.hostname', 'evt.is_open_exec', 'proc.sid', 'proc.vpgid', 'proc.sname', 'user.loginname', 'container.name'];
const HOST = 'session-test-host';

/** A condition literal for a field value. */
function literal(v: RawValue): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

run_('session: thread.tid, evt.time/rawtime/dir/source/hostname/is_open_exec, proc.sid/vpgid/sname, user.loginname and container.name agree between the C translator and the oracle for a real setsid shell', async () => {
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
  const refs = FIELDS.map(fieldRef);
  // the oracle, piece by piece: every event's field values (through a module that reads them all)
  const reading: readonly LoadedRule[] = loadRules([
    { name: 'fields.yaml', text: `- rule: fields\n  desc: d\n  condition: evt.type in (open, openat) and (${FIELDS.map((f) => `${f} exists`).join(' or ')})\n  output: x\n  priority: NOTICE\n` },
  ]).ruleset.rules;
  const objects = new Map<number, { type: string; values: Array<RawValue | undefined>; ev: FieldEvent }>();
  bytesPass(rec, await compileAll(reading), new KernelIngest({ native: false, hostname: HOST }), (off, ev) => objects.set(off, { type: String(ev.field(fieldRef('evt.type'))), values: refs.map((r) => ev.field(r)), ev }));
  // the marker opens and a rule per marker from the oracle's values
  const markers = [...objects].filter(([, o]) => ['m1', 'm2', 'm3'].some((f) => o.ev.field(fieldRef('fd.name')) === join(dir, f)));
  assert.is(markers.length, 3, `marker opens: ${markers.map(([, o]) => o.ev.field(fieldRef('fd.name'))).join(' ')}`);
  const rulesText = markers
    .map(([, o], k) => {
      const parts = FIELDS.map((f, j) => (o.values[j] === undefined ? `not ${f} exists` : `${f} = ${literal(o.values[j]!)}`));
      return `- rule: marker ${k}\n  desc: d\n  condition: evt.type = ${o.type} and ${parts.join(' and ')}\n  output: x\n  priority: NOTICE\n`;
    })
    .join('');
  const loaded = loadRules([{ name: 'markers.yaml', text: rulesText }]);
  assert.ok(loaded.ok, rulesText);
  const m = await compileAll(loaded.ruleset.rules);
  const pass = translatorsPass(rec, m, HOST);
  assert.ok(
    FIELDS.every((f) => ['proc.', 'user.', 'container.'].some((p) => f.startsWith(p)) || pass.slots.includes(f)),
    pass.slots.join(' '),
  );
  assert.equal(pass.native.flatMap((r, i) => (r === pass.oracle[i] ? [] : [`native ${r}\noracle ${pass.oracle[i]}`])).slice(0, 5), []);
  const judged = bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: HOST }), () => undefined);
  // the C translator, the same pieces: matches and rendered fields
  const diffs: string[] = [];
  let events = 0;
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: HOST }), (off, bytes) => {
    const obj = objects.get(off)!;
    refs.forEach((rf, j) => {
      const b = bytes.field(rf);
      if (obj.values[j] !== b)
        diffs.push(`${obj.type} ${rf.canonical}: oracle ${String(obj.values[j])}, bytes ${String(b)} (pid ${dv.getUint32(off + HDR.pid, true)} ${String(obj.ev.field(fieldRef('proc.name')))} ${String(obj.ev.field(fieldRef('fd.name')))})`);
    });
    events++;
  });
  assert.equal([...new Set(diffs)].slice(0, 20), []);
  assert.ok(events >= 3, `${events} events`);
  markers.forEach(([off, o], k) => {
    assert.equal(judged.get(off), [`marker ${k}`], `marker ${k} through the oracle (${o.type})`);
    assert.equal(matched.get(off), [`marker ${k}`], `marker ${k} through the C translator`);
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
