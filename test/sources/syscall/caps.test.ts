// thread.cap_inheritable/permitted/effective on real kernel records, the C translator against the
// TypeScript oracle and against the kernel's own account: grep prints CapInh/CapPrm/CapEff of
// /proc/self/status while it opens a marker file, run as root, as nobody with no capabilities
// (setpriv --reuid/--regid --inh-caps=-all), as root without CAP_SYS_ADMIN/CAP_SYS_MODULE in its
// bounding set, and as root with CAP_CHOWN inheritable. Each marker open must carry, through both,
// libsinsp's text of the sets grep printed (caps_to_string: names in bit order, one space apart,
// '' when empty); every captured event must render the three fields alike and get the same eval
// record through both; and rules on the fields (the stable rules' forms: `contains CAP_SYS_ADMIN`,
// `icontains sys_module`) must match the same events through both. And a capset(2) without exec
// (perl dropping CAP_SYS_ADMIN from its effective set) changes the sets of its later events, as
// libsinsp's capset exit event does.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules, type LoadedRule } from '../../../host/engine/index.js';
import type { RawValue } from '../../../host/engine/interpreter.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { CAPS, HDR, KIND, SIZES } from '../../../host/abi/records.js';
import { loadNative } from '../../../host/sources/syscall/addon.js';
import { decodeRecord } from '../../helpers/record-decoder.js';
import { capsText, parseCapHex } from '../../../host/sources/syscall/caps.js';
import { compileAll } from '../../../support/differential.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel, translatorsPass, twin, type Recording } from './recording.js';
import { fieldRef } from '../../helpers/field-ref.js';

const gate = kernelGate('caps.test.ts');
const run_ = gate.run ? test : test.skip;

const FIELDS = ['thread.cap_inheritable', 'thread.cap_permitted', 'thread.cap_effective'];
const STATUS_KEYS = ['CapInh', 'CapPrm', 'CapEff'];
/** How each marker's grep runs (setpriv from util-linux). */
const RUNS: string[][] = [[], ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all'], ['setpriv', '--bounding-set=-sys_admin,-sys_module'], ['setpriv', '--inh-caps=+chown']];
const RULES = loadRules([
  {
    name: 'caps.yaml',
    text: [
      ['admin', 'thread.cap_effective contains CAP_SYS_ADMIN and thread.cap_effective contains CAP_DAC_OVERRIDE'],
      ['module', 'thread.cap_effective icontains sys_module'],
      ['no caps', 'thread.cap_effective = "" and thread.cap_permitted = ""'],
      ['chown inheritable', 'thread.cap_inheritable = CAP_CHOWN'],
    ]
      .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type in (open, openat) and fd.name contains rae-caps- and ${c}\n  output: x\n  priority: NOTICE\n`)
      .join(''),
  },
]);

/** The oracle and the C translator over a recording: each event's thread.cap_* values, fd.name and matched rules (oracle), and the C translator's matches; diffs lists fields rendered or records written differently. */
async function judgeBoth(rec: Recording, rules: readonly LoadedRule[]) {
  const m = await compileAll(rules);
  const dv = new DataView(rec.buf.buffer);
  const refs = FIELDS.map(fieldRef);
  const objects = new Map<number, { values: Array<RawValue | undefined>; name: RawValue | undefined; matched: string[] }>();
  const oracleMatched = bytesPass(rec, twin(m), new KernelIngest({ native: false, hostname: 'caps-test' }), (off, ev) => objects.set(off, { values: refs.map((r) => ev.field(r)), name: ev.field(fieldRef('fd.name')), matched: [] }));
  for (const [off, names] of oracleMatched) objects.get(off)!.matched = names;
  const pass = translatorsPass(rec, m, 'caps-test');
  const diffs: string[] = pass.native.flatMap((r, i) => (r === pass.oracle[i] ? [] : [`native ${r}\noracle ${pass.oracle[i]}`]));
  const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'caps-test' }), (off, bytes) => {
    const obj = objects.get(off)!;
    refs.forEach((rf, j) => {
      const b = bytes.field(rf);
      if (obj.values[j] !== b) diffs.push(`${rf.canonical}: oracle ${String(obj.values[j])}, bytes ${String(b)} (pid ${dv.getUint32(off + HDR.pid, true)} ${String(obj.name)})`);
    });
  });
  return { objects, matched, diffs };
}

run_('caps: thread.cap_* agree between the C translator, the oracle and /proc/self/status for root, nobody and setpriv-reduced processes', async () => {
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
    rec = recordKernel(['openat', 'open'], () =>
      RUNS.forEach((pre, k) => {
        const argv = [...pre, '/bin/grep', '^Cap', '/proc/self/status', join(dir, `m${k}`)];
        printed.push(execFileSync(argv[0]!, argv.slice(1), { encoding: 'utf8' }));
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // what each grep's kernel said: the three sets as libsinsp renders them
  const want = printed.map((out) => STATUS_KEYS.map((key) => capsText(parseCapHex(new RegExp(`${key}:\\s*(\\S+)`).exec(out)?.[1]))));
  assert.ok(want[0]![2]!.split(' ').includes('CAP_SYS_ADMIN'), `root's effective set: ${want[0]![2]}`);
  assert.equal(want[1], ['', '', ''], 'nobody without capabilities');
  assert.not.ok(want[2]![2]!.includes('CAP_SYS_ADMIN'), want[2]![2]);
  assert.is(want[3]![0], 'CAP_CHOWN');

  const { objects, matched, diffs } = await judgeBoth(rec, RULES.ruleset.rules);
  assert.equal([...new Set(diffs)].slice(0, 20), []);
  // each marker open: the sets grep printed, and the rules' verdicts, on both paths
  const expectRules = [['admin', 'module'], ['no caps'], [], ['admin', 'module', 'chown inheritable']];
  RUNS.forEach((_, k) => {
    const marker = [...objects].filter(([, o]) => o.name === join(dir, `m${k}`));
    assert.is(marker.length, 1, `marker ${k} opens: ${marker.length}`);
    const [off, o] = marker[0]!;
    assert.equal(o.values, want[k], `marker ${k} (${RUNS[k]!.join(' ') || 'root'}): the sets grep printed`);
    assert.equal(o.matched, expectRules[k], `marker ${k} through the oracle`);
    assert.equal(matched.get(off) ?? [], expectRules[k], `marker ${k} through the C translator`);
  });
});

/** Perl (perl-base): opens ARGV[0], drops CAP_SYS_ADMIN from its effective set with capget/capset (x86-64 125/126, no exec), prints its Cap lines of /proc/self/status, opens ARGV[1]. */
const CAPSET_PL = [
  'open(my $a, "<", $ARGV[0]) or die "open: $!"; close $a;',
  'my $hdr = pack("LL", 0x20080522, 0); my $data = "\\0" x 24;',
  'syscall(125, $hdr, $data) == 0 or die "capget: $!";',
  'my @d = unpack("L6", $data); $d[0] &= ~(1 << 21); $data = pack("L6", @d);',
  'syscall(126, $hdr, $data) == 0 or die "capset: $!";',
  'open(my $s, "<", "/proc/self/status") or die; print grep { /^Cap/ } <$s>; close $s;',
  'open(my $b, "<", $ARGV[1]) or die "open: $!"; close $b;',
].join(' ');

run_('caps: a capset without exec (CAP_SYS_ADMIN dropped from the effective set) is seen from the next event on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-caps-'));
  let printed = '';
  let rec: Recording;
  try {
    for (const f of ['before', 'after']) writeFileSync(join(dir, f), 'x\n');
    rec = recordKernel(['openat', 'open'], () => {
      printed = execFileSync('/usr/bin/perl', ['-e', CAPSET_PL, join(dir, 'before'), join(dir, 'after')], { encoding: 'utf8' });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const sets = STATUS_KEYS.map((key) => parseCapHex(new RegExp(`${key}:\\s*(\\S+)`).exec(printed)?.[1]));
  assert.ok((sets[1]! >> 21n) & 1n, `CAP_SYS_ADMIN still permitted: ${printed}`);
  assert.not.ok((sets[2]! >> 21n) & 1n, `CAP_SYS_ADMIN no longer effective: ${printed}`);
  const rules = loadRules([
    { name: 'admin.yaml', text: '- rule: admin\n  desc: d\n  condition: evt.type in (open, openat) and fd.name contains rae-caps- and thread.cap_effective contains CAP_SYS_ADMIN\n  output: x\n  priority: NOTICE\n' },
  ]);
  assert.ok(rules.ok);
  const { objects, matched, diffs } = await judgeBoth(rec, rules.ruleset.rules);
  assert.equal([...new Set(diffs)].slice(0, 20), []);
  const at = (f: string) => {
    const hits = [...objects].filter(([, o]) => o.name === join(dir, f));
    assert.is(hits.length, 1, `${f} opens: ${hits.length}`);
    return hits[0]!;
  };
  const [beforeOff, before] = at('before');
  const [afterOff, after] = at('after');
  assert.ok(String(before.values[2]).split(' ').includes('CAP_SYS_ADMIN'), String(before.values[2]));
  assert.equal(after.values, sets.map(capsText), 'after capset: the sets perl printed');
  assert.equal(before.matched, ['admin']);
  assert.equal(after.matched, []);
  assert.equal(matched.get(beforeOff), ['admin'], 'C translator before capset');
  assert.is(matched.get(afterOff), undefined, 'C translator after capset');
});

test('caps: struct rae_caps offsets match the C compiler, and a CAPS record decodes', () => {
  const loaded = loadNative();
  if ('native' in loaded) assert.equal(loaded.native.layout().caps, { ...CAPS });
  else if (gate.run) assert.unreachable(`addon: ${loaded.error}`);
  const rec = new Uint8Array(SIZES.caps);
  const dv = new DataView(rec.buffer);
  dv.setUint32(HDR.len, SIZES.caps, true);
  dv.setUint16(HDR.kind, KIND.CAPS, true);
  dv.setUint32(HDR.pid, 42, true);
  dv.setBigUint64(CAPS.cap_inheritable, 1n, true);
  dv.setBigUint64(CAPS.cap_permitted, 0x200003n, true);
  dv.setBigUint64(CAPS.cap_effective, 1n << 21n, true);
  const r = decodeRecord(rec, 0);
  assert.ok(!('code' in r) && r.kind === KIND.CAPS);
  if (!('code' in r) && r.kind === KIND.CAPS) assert.equal([r.pid, capsText(r.capInheritable), capsText(r.capPermitted), capsText(r.capEffective)], [42, 'CAP_CHOWN', 'CAP_CHOWN CAP_DAC_OVERRIDE CAP_SYS_ADMIN', 'CAP_SYS_ADMIN']);
  // bits past CAP_CHECKPOINT_RESTORE (40) are not named, as in libsinsp
  assert.is(capsText((1n << 41n) | (1n << 40n)), 'CAP_CHECKPOINT_RESTORE');
  assert.is(capsText(0n), '');
});

test.run();
