// Falco 0.45's raw-byte language on real kernel events (root, the probe): a file whose name has
// bytes that are no UTF-8 (0xFF 0xFE) and a process whose command line has them. A real
// `rae run` with rules comparing those bytes (`=`, `startswith`, `contains`, `in` with `\xHH`
// escapes, `regex` on U+FFFD) raises their alerts, with U+FFFD in place of the bytes; the same
// name written as the characters ÿþ (other bytes) raises only the rule spelling those bytes.
// Then the same actions recorded: the compiled module and the reference interpreter (on the
// values the kernel path decodes for it, as its overlay tier and hand-backs judge them) match
// the same events. Rules name this test's own temporary directory and marker, so other
// processes on the machine cannot match.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRules } from '../../../host/engine/index.js';
import { Interpreter } from '../../../host/engine/interpreter.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { compileAll } from '../../../support/differential.js';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { fieldRef } from '../../helpers/field-ref.js';
import { kernelGate } from './collector.js';
import { bytesPass, recordKernel } from './recording.js';

const gate = kernelGate('raw-bytes.test.ts');
const run_ = gate.run ? test : test.skip;

/** Perl (its strings are bytes): creates DIR/x\xff\xfe and DIR/xÿþ (UTF-8), then runs /bin/true with the argument MARKER\xff\xfe. */
const ACTIONS_PL = ['my ($d, $m) = @ARGV;', 'for my $n ("x\\xff\\xfe", "x\\xc3\\xbf\\xc3\\xbe") { open(my $f, ">", "$d/$n") or die "$n: $!"; close $f }', 'system("/bin/true", "$m\\xff\\xfe") == 0 or die "true: $?";'].join(' ');

function rulesYaml(dir: string, marker: string): string {
  const rule = (name: string, condition: string, output = 'file=%fd.name') => `- rule: ${name}\n  desc: d\n  condition: ${JSON.stringify(condition)}\n  output: ${JSON.stringify(output)}\n  priority: WARNING\n`;
  const open = 'evt.type in (open, openat, openat2)';
  return [
    rule('raw equal', `${open} and fd.name = "${dir}/x\\xff\\xfe"`),
    rule('raw startswith', `${open} and fd.name startswith "${dir}/x\\xff"`),
    rule('raw contains', `${open} and fd.name startswith "${dir}/" and fd.name contains "x\\xff\\xfe"`),
    rule('raw in', `${open} and fd.name in ("/nonexistent", "${dir}/x\\xff\\xfe")`),
    rule('regex on U+FFFD', `${open} and fd.name regex "${dir}/x\uFFFD\uFFFD"`),
    rule('characters', `${open} and fd.name = "${dir}/xÿþ"`),
    rule('their bytes', `${open} and fd.name = "${dir}/x\\xc3\\xbf\\xc3\\xbe"`),
    rule('raw cmdline', `evt.type in (execve, execveat) and proc.cmdline contains "${marker}\\xff\\xfe"`, 'cmd=%proc.cmdline'),
  ].join('');
}

const EVT_TYPE = fieldRef('evt.type');
const RAW_RULES = ['raw equal', 'raw startswith', 'raw contains', 'raw in', 'regex on U+FFFD'];

run_('raw bytes: rae run raises the alerts of rules on raw path and command-line bytes, printing U+FFFD for them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-raw-'));
  const marker = `rae-raw-${process.pid}-${Date.now()}`;
  let rae: RaeRun | undefined;
  try {
    const cfg = join(dir, 'config.yaml');
    writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\ncontainers:\n  enabled: false\n');
    const rulesFile = join(dir, 'rules.yaml');
    writeFileSync(rulesFile, rulesYaml(dir, marker));
    rae = startRae(['--config', cfg, '--state-dir', join(dir, 'state'), '-o', 'rules.builtIn=[]', '-o', 'rules.ruleMatching=all', '-r', rulesFile]);
    await rae.waitLog(/run: ready/, 0, 300_000);
    execFileSync('/usr/bin/perl', ['-e', ACTIONS_PL, dir, marker]);
    const names = [...RAW_RULES, 'their bytes', 'raw cmdline'];
    await rae.waitAlerts((as) => names.every((n) => as.some((a) => a.rule === n)), names.join(', '), 120_000);
    // the file's alerts print its name with U+FFFD for each byte that is no UTF-8
    for (const n of RAW_RULES) assert.equal(rae.alerts.find((a) => a.rule === n)!.output_fields['fd.name'], `${dir}/x\uFFFD\uFFFD`, n);
    assert.equal(rae.alerts.find((a) => a.rule === 'their bytes')!.output_fields['fd.name'], `${dir}/xÿþ`);
    assert.equal(rae.alerts.find((a) => a.rule === 'raw cmdline')!.output_fields['proc.cmdline'], `true ${marker}\uFFFD\uFFFD`);
    // the characters ÿþ are not the bytes 0xFF 0xFE: the rule spelling them matched the UTF-8 file only
    assert.equal(
      rae.alerts.filter((a) => a.rule === 'characters').map((a) => a.output_fields['fd.name']),
      rae.alerts.filter((a) => a.rule === 'their bytes').map((a) => a.output_fields['fd.name']),
    );
    // every line on stdout is valid UTF-8 JSON without a raw byte or a lone surrogate
    for (const line of rae.stdoutLines()) assert.ok(!/[\uD800-\uDFFF]/.test(line), line);
  } finally {
    await rae?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

run_('raw bytes: on recorded kernel events the interpreter matches what the compiled module matches', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rae-raw-'));
  const marker = `rae-raw-${process.pid}-${Date.now()}`;
  try {
    const loaded = loadRules([{ name: 'raw.yaml', text: rulesYaml(dir, marker) }]);
    assert.ok(loaded.ok, loaded.diagnostics.map((d) => d.message).join('\n'));
    const rules = loaded.ruleset.rules;
    const m = await compileAll(rules);
    const rec = recordKernel(['open', 'openat', 'openat2', 'execve', 'execveat'], () => execFileSync('/usr/bin/perl', ['-e', ACTIONS_PL, dir, marker]));
    const interp = new Interpreter();
    const byInterpreter = new Map<number, string[]>();
    const matched = bytesPass(rec, m, new KernelIngest({ hostname: 'h' }), (off, ev) => {
      const type = String(ev.field(EVT_TYPE));
      const hits = rules.filter((r) => r.evttypes?.has(type) && interp.evaluate(r.condition, ev)).map((r) => r.name);
      if (hits.length > 0) byInterpreter.set(off, hits);
    });
    const names = (x: Map<number, string[]>) => [...x.values()].flat().sort();
    assert.equal(names(matched), [...RAW_RULES, 'characters', 'raw cmdline', 'their bytes'].sort());
    assert.equal(names(byInterpreter), names(matched));
    assert.equal([...byInterpreter.keys()].sort(), [...matched.keys()].sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
