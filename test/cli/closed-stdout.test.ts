// Every `rae` command that writes to stdout, with a stdout whose reader has gone (`rae run
// --list=k8s_audit | head -1`): it ends quietly with 0, as falco does, not with Node's unhandled
// EPIPE (a stack trace on stderr, exit 1). The pipe's read end is closed before rae starts, so
// its first write fails for certain; one case goes through a real `| head -1` in bash.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { corpusPath } from '../../support/corpus.js';

const tmp = mkdtempSync(join(tmpdir(), 'rae-closed-stdout-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

const audit = corpusPath('k8s_audit_rules.yaml');
const COMMANDS: string[][] = [
  ['--help'],
  ['run', '--list=k8s_audit'],
  ['run', '--list-events'],
  ['run', '--version'],
  ['run', '-L', '--state-dir', join(tmp, 'state')],
  ['validate', '-r', audit],
  ['describe', '-r', audit],
  ['convert', '--input', audit],
  ['replay', '-r', audit, '--format', 'audit', '--input', 'test/fixtures/k8saudit-samples/exec_pod.json'],
  ['event-generator', 'list'],
  ['webhook-config', '--state-dir', join(tmp, 'state')],
  ['admin', '--help'],
];

/** Runs `rae args` with stdout a pipe whose read end is already closed; resolves with the exit status and stderr. */
function withClosedStdout(args: string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, ['bin/rae.js', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
}

for (const args of COMMANDS) {
  test(`rae ${args.join(' ')} with a closed stdout: exit 0, nothing on stderr about it`, async () => {
    const r = await withClosedStdout(args);
    assert.is(r.code, 0, `${r.signal ?? ''}\n${r.stderr}`);
    assert.not.match(r.stderr, /EPIPE|Unhandled|\n\s+at /);
  });
}

test('rae run with a closed stderr: a clean stop, exit 0 (it spun on its own EPIPE reports and ignored SIGTERM)', async () => {
  const cfg = join(tmp, 'run-stderr.yaml');
  writeFileSync(cfg, 'rules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n');
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', cfg, '--state-dir', join(tmp, 'stderr-state')], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.destroy(); // its first log line at start fails with EPIPE
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // a wide deadline against a busy machine: a run that spins never exits, so SIGTERM, then SIGKILL, ends it
  const deadline = setTimeout(() => {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  }, 180_000);
  const r = await exited;
  clearTimeout(deadline);
  assert.equal(r, { code: 0, signal: null }, 'rae run stops cleanly by itself when the reader of its stderr has gone');
});

test('bash: set -o pipefail; rae run --list=k8s_audit | head -1: the first line, status 0', () => {
  const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" bin/rae.js run --list=k8s_audit | head -1`], { encoding: 'utf8' });
  assert.is(r.stdout, 'Source k8s_audit:\n');
  assert.is(r.status, 0, r.stderr);
  assert.not.match(r.stderr, /EPIPE/);
});

test.run();
