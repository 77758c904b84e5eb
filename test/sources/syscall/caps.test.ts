// thread.cap_inheritable/permitted/effective on real kernel records, byte path against objects
// path and against the kernel's own account: grep prints CapInh/CapPrm/CapEff of
// /proc/self/status while it opens a marker file, run as root, as nobody with no capabilities
// (setpriv --reuid/--regid --inh-caps=-all), as root without CAP_SYS_ADMIN/CAP_SYS_MODULE in its
// bounding set, and as root with CAP_CHOWN inheritable. Each marker open must carry, on both paths,
// libsinsp's text of the sets grep printed (caps_to_string: names in bit order, one space apart,
// '' when empty); every captured event must render the three fields alike on both paths
// (KernelIngest.fieldsOf against SyscallEvent); and rules on the fields (the stable rules' forms:
// `contains CAP_SYS_ADMIN`, `icontains sys_module`) must match the same events on both paths.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { lookupField } from '../../../host/engine/fields/index.js';
import { Interpreter, type RawValue } from '../../../host/engine/interpreter.js';
import type { FieldRef } from '../../../host/engine/ir.js';
import { KernelIngest } from '../../../host/runtime/kernel-ingest.js';
import { FieldEvent } from '../../../host/sources/field-event.js';
import { HDR, KIND } from '../../../host/sources/syscall/abi.js';
import { capsText, parseCapHex } from '../../../host/sources/syscall/caps.js';
import { SyscallEvent } from '../../../host/sources/syscall/event.js';
import { ProcessTable } from '../../../host/sources/syscall/state.js';
import { syscallName } from '../../../host/sources/syscall/syscalls.js';
import { UserNames } from '../../../host/sources/syscall/users.js';
import { compileAll } from '../../runtime/differential-helpers.js';
import { kernelGate } from './collector.js';
import { batchPieces, recordKernel, type Recording } from './recording.js';

const gate = kernelGate('caps.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['thread.cap_inheritable', 'thread.cap_permitted', 'thread.cap_effective'];
const STATUS_KEYS = ['CapInh', 'CapPrm', 'CapEff'];
/** How each marker's grep runs (setpriv from util-linux). */
const RUNS: string[][] = [
  [],
  ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'],
  ['setpriv', '--bounding-set=-sys_admin,-sys_module'],
  ['setpriv', '--inh-caps=+chown'],
];
const RULES = loadRules([{ name: 'caps.yaml', text: [
  ['admin', 'thread.cap_effective contains CAP_SYS_ADMIN and thread.cap_effective contains CAP_DAC_OVERRIDE'],
  ['module', 'thread.cap_effective icontains sys_module'],
  ['no caps', 'thread.cap_effective = "" and thread.cap_permitted = ""'],
  ['chown inheritable', 'thread.cap_inheritable = CAP_CHOWN'],
].map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type in (open, openat) and fd.name contains rae-caps- and ${c}\n  output: x\n  priority: NOTICE\n`).join('') }]);

const ref = (name: string): FieldRef => {
  const def = lookupField('syscall', name)!;
  return { kind: 'field', def, canonical: name, type: def.type, isList: false };
};

run_('caps: thread.cap_* agree on both paths and with /proc/self/status for root, nobody and setpriv-reduced processes', async () => {
  assert.ok(RULES.ok);
  const dir = mkdtempSync(join(tmpdir(), 'rae-caps-'));
  const printed: string[] = [];
  let rec: Recording;
  try {
    chmodSync(dir, 0o755);
    RUNS.forEach((_, k) => {
      writeFileSync(join(dir, `m${k}`), 'x\n');
      chmodSync(join(dir, `m${k}`), 0o644);
    });
    rec = recordKernel(['openat', 'open'], () => RUNS.forEach((pre, k) => {
      const argv = [...pre, '/bin/grep', '^Cap', '/proc/self/status', join(dir, `m${k}`)];
      printed.push(execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }));
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // what each grep's kernel said: the three sets as libsinsp renders them
  const want = printed.map((out) => STATUS_KEYS.map((key) => capsText(parseCapHex(new RegExp(`${key}:\\s*(\\S+)`).exec(out)?.[1]))));
  assert.ok(want[0]![2]!.split(' ').includes('CAP_SYS_ADMIN'), `root's effective set: ${want[0]![2]}`);
  assert.equal(want[1], ['', '', ''], 'nobody without capabilities');
  assert.not.ok(want[2]![2]!.includes('CAP_SYS_ADMIN'), want[2]![2]);
  assert.is(want[3]![0], 'CAP_CHOWN');

  const { buf, fill, epochNs: epoch } = rec;
  const dv = new DataView(buf.buffer);
  const refs = FIELDS.map(ref);
  const rules = RULES.ruleset.rules;
  const m = await compileAll(rules);
  const cuts = batchPieces(buf, fill);
  // the objects path, piece by piece: events built while the piece's process records apply, judged after, exits dropped
  const interp = new Interpreter();
  const table = new ProcessTable();
  const ctx = { table, names: new UserNames(), hostname: 'caps-test' };
  const objects = new Map<number, { values: Array<RawValue | undefined>; name: RawValue | undefined; matched: string[] }>();
  let num = 0;
  for (const [from, to] of cuts) {
    const evs: Array<[number, SyscallEvent]> = [];
    for (let off = from; off < to; off += dv.getUint32(off + HDR.len, true)) {
      const kind = dv.getUint16(off + HDR.kind, true);
      if (kind !== KIND.SYSCALL) {
        table.apply(buf, dv, off, kind);
        continue;
      }
      const ts = dv.getBigUint64(off + HDR.ts_ns, true);
      evs.push([off, new SyscallEvent(ctx, buf, dv, off, syscallName(dv.getUint16(off + HDR.nr, true)), table.get(dv.getUint32(off + HDR.pid, true)), ts + epoch, ++num)]);
    }
    for (const [off, ev] of evs) objects.set(off, { values: refs.map((r) => ev.field(r)), name: ev.field(ref('fd.name')), matched: rules.filter((r) => interp.evaluate(r.condition, ev)).map((r) => r.name) });
    table.flushExits();
  }
  // the byte path: the same pieces, matches and rendered fields
  const ki = new KernelIngest({ hostname: 'caps-test' });
  const matched = new Map<number, string[]>();
  const diffs: string[] = [];
  for (const [from, to] of cuts) {
    const view = buf.subarray(from, to);
    const offsets = ki.ingest(m, view, to - from, epoch);
    const r = m.evaluateRecords('syscall', offsets.length, false);
    assert.ok(r.ok);
    if (r.ok) for (const x of r.matches) matched.set(from + offsets[x.event]!, [...(matched.get(from + offsets[x.event]!) ?? []), x.rule.name]);
    offsets.forEach((o, i) => {
      const obj = objects.get(from + o)!;
      const bytes = new FieldEvent(ki.fieldsOf(m, view, o, i), { source: 'syscall', timeNs: 0n, num: 1n });
      refs.forEach((rf, j) => {
        const b = bytes.field(rf);
        if (obj.values[j] !== b) diffs.push(`${rf.canonical}: objects ${String(obj.values[j])}, bytes ${String(b)} (pid ${dv.getUint32(from + o + HDR.pid, true)} ${String(obj.name)})`);
      });
    });
  }
  assert.equal([...new Set(diffs)].slice(0, 20), []);
  // each marker open: the sets grep printed, and the rules' verdicts, on both paths
  const expectRules = [['admin', 'module'], ['no caps'], [], ['admin', 'module', 'chown inheritable']];
  RUNS.forEach((_, k) => {
    const marker = [...objects].filter(([, o]) => o.name === join(dir, `m${k}`));
    assert.is(marker.length, 1, `marker ${k} opens: ${marker.length}`);
    const [off, o] = marker[0]!;
    assert.equal(o.values, want[k], `marker ${k} (${RUNS[k]!.join(' ') || 'root'}): the sets grep printed`);
    assert.equal(o.matched, expectRules[k], `marker ${k} on the objects path`);
    assert.equal(matched.get(off) ?? [], expectRules[k], `marker ${k} on the byte path`);
  });
});

test.run();
