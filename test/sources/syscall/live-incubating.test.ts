// Live detection with the upstream incubating rules loaded next to the bundled ones (root, real
// kernel, the real `rae run`): the byte path provides the evt.arg.* fields the incubating rules
// read (no load-time warning names them, while a rule reading evt.arg.addr, which kernel events
// lack, is named in one), and incubating rules fire on it from harmless calls in a temporary
// directory: 'Set Setuid or Setgid bit' from chmod u+s on a temp file, 'Delete or rename shell
// history' from removing a temp .bash_history, with their evt.arg.* output fields.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { kernelGate } from './collector.js';
import { corpusPath } from '../../../support/corpus.js';

const gate = kernelGate('live-incubating.test.ts');
const run_ = gate.run ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-live-inc-'));
let rae: RaeRun;

/** Runs a command and resolves with its exit code. */
function run(cmd: string, args: string[], cwd?: string): Promise<number | null> {
  return new Promise((done) => spawn(cmd, args, { stdio: 'ignore', cwd }).on('exit', (code) => done(code)));
}

/** The first alert of `rule` whose output fields include `want`, waiting up to `ms`. */
async function alertOf(rule: string, want: Record<string, unknown>, ms: number): Promise<RaeRun['alerts'][number]> {
  const matches = (a: RaeRun['alerts'][number]) => a.rule === rule && Object.entries(want).every(([k, v]) => a.output_fields[k] === v);
  await rae
    .waitAlerts((as) => as.some(matches), `${rule} with ${JSON.stringify(want)}`, ms)
    .catch((err: Error) => {
      const seen = rae.alerts.filter((a) => a.rule === rule).map((a) => JSON.stringify(a.output_fields));
      throw new Error(`${err.message.split('\n')[0]}; alerts of this rule seen: ${seen.join(' ; ') || 'none'}`);
    });
  return rae.alerts.find(matches)!;
}

run_('live incubating: rae run with the incubating rules warns of the one field kernel events lack', async () => {
  const cfg = join(root, 'config.yaml');
  const extra = join(root, 'addr.yaml');
  writeFileSync(extra, '- rule: ptrace addr\n  desc: reads a field kernel events lack\n  condition: evt.type = ptrace and evt.arg.addr = "1"\n  output: "addr %evt.arg.addr"\n  priority: NOTICE\n');
  writeFileSync(cfg, `rules:\n  builtIn: [syscall]\n  files: [${JSON.stringify(corpusPath('falco-incubating_rules.yaml'))}, ${JSON.stringify(extra)}]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n`);
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
  assert.match(rae.stderr(), /module: source syscall started/);
  assert.match(rae.stderr(), /syscall: capturing \d+ syscalls the rules need \(.*\bfchmodat\b.*\)/);
  assert.match(rae.stderr(), /syscall: warning: kernel events do not provide evt\.arg\.addr, it reads as missing in rule "ptrace addr" \(condition\), "ptrace addr" \(output\)/);
  assert.not.match(rae.stderr(), /kernel events do not provide evt\.arg\.(?!addr)/);
});

run_("live incubating: chmod u+s on a temp file gives 'Set Setuid or Setgid bit' with its mode and filename", async () => {
  const dir = mkdtempSync(join(root, 'w-'));
  const file = join(dir, 'suid-me');
  writeFileSync(file, '', { mode: 0o644 });
  assert.is(await run('chmod', ['644', file]), 0);
  assert.is(await run('chmod', ['u+s', 'suid-me'], dir), 0);
  const a = await alertOf('Set Setuid or Setgid bit', { 'evt.arg.filename': file }, 300_000);
  assert.is(a.source, 'syscall');
  assert.is(a.output_fields['evt.arg.mode'], 'S_IROTH|S_IRGRP|S_IWUSR|S_IRUSR|S_ISUID');
  assert.match(String(a.output_fields['evt.type']), /^(chmod|fchmodat2?)$/);
  assert.is(a.output_fields['proc.name'], 'chmod');
  assert.is(a.output_fields['proc.cmdline'], 'chmod u+s suid-me');
  assert.is(a.output_fields['user.name'], 'root');
});

run_("live incubating: removing a temp .bash_history gives 'Delete or rename shell history'", async () => {
  const dir = mkdtempSync(join(root, 'h-'));
  const hist = join(dir, '.bash_history');
  writeFileSync(hist, 'ls\n');
  assert.is(await run('rm', ['.bash_history'], dir), 0);
  const a = await alertOf('Delete or rename shell history', { 'evt.arg.name': hist }, 300_000);
  assert.is(a.output_fields['evt.type'], 'unlinkat');
  assert.is(a.output_fields['proc.name'], 'rm');
  assert.is(a.output_fields['evt.arg.path'], null);
});

run_('live incubating: rae run stops cleanly', async () => {
  assert.is(await rae.stop(), 0, rae.stderr());
  rmSync(root, { recursive: true, force: true });
});

test.run();
