// Live detection through `rae run` on the real kernel (root): the engine is started as a user
// would (api and webhook off, forwarder on port 0), real harmless syscalls are made from this
// process and its children, and the alerts on rae run's stdout are checked rule by rule with
// their key fields. The actions are the event generator's (host/generator), run in-process with
// a temporary directory for everything that writes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SYSCALL_ACTIONS } from '../../../host/generator/syscall-actions.js';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('live.test.ts');
const root = mkdtempSync(join(tmpdir(), 'rae-live-'));
const tmp = join(root, 'work');
let rae: RaeRun;

type Alert = RaeRun['alerts'][number] & { time?: string };
type Expect = Record<string, string | number | boolean | RegExp>;

/** Runs a command and resolves when it has exited. */
function run(cmd: string, args: string[]): Promise<number | null> {
  return new Promise((resolve) => spawn(cmd, args, { stdio: 'ignore' }).on('exit', (code) => resolve(code)));
}

/** The first alert of `rule` whose output fields match `want`, waiting up to `ms`. */
async function alertOf(rule: string, want: Expect, ms: number): Promise<Alert> {
  const matches = (a: Alert) => a.rule === rule && Object.entries(want).every(([k, v]) => (v instanceof RegExp ? v.test(String(a.output_fields[k])) : a.output_fields[k] === v));
  await rae
    .waitAlerts((as) => as.some(matches), `${rule} with ${JSON.stringify(want, (_k, v) => (v instanceof RegExp ? String(v) : v))}`, ms)
    .catch((err: Error) => {
      const seen = rae.alerts.filter((a) => a.rule === rule).map((a) => JSON.stringify(a.output_fields));
      throw new Error(`${err.message.split('\n')[0]}; alerts of this rule seen: ${seen.join(' ; ') || 'none'}`);
    });
  return rae.alerts.find(matches)!;
}

const run_ = gate.run ? test : test.skip;

run_('live: rae run starts the kernel source', async () => {
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  rae = startRae(['--config', cfg, '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
  assert.match(rae.stderr(), /module: source syscall started/);
  assert.match(rae.stderr(), /syscall: capturing \d+ syscalls the rules need \(.*\bopenat\b.*\)/);
  // kernel events provide every process, fd and evt field of the bundled rules (container and k8s metadata aside)
  assert.not.match(rae.stderr(), /kernel events do not provide (proc\.|fd\.|evt\.|user\.|group\.|thread\.)/);
});

run_("live: sh -c 'cat /etc/shadow' gives Read sensitive file untrusted within one second", async () => {
  const code = await run('sh', ['-c', 'cat /etc/shadow > /dev/null']);
  assert.is(code, 0);
  const a = await alertOf('Read sensitive file untrusted', { 'proc.name': 'cat', 'fd.name': '/etc/shadow' }, 1000);
  assert.is(a.source, 'syscall');
  assert.is(a.output_fields['user.name'], 'root');
  assert.is(a.output_fields['user.uid'], 0);
  assert.is(a.output_fields['proc.pname'], 'sh');
  assert.is(a.output_fields['proc.cmdline'], 'cat /etc/shadow');
  assert.is(a.output_fields['proc.exepath'], '/usr/bin/cat');
  assert.is(a.output_fields['evt.type'], 'openat');
  assert.is(a.output_fields['container.id'], 'host');
});

/** Key fields per generator action (fields of each rule's output). */
const EXPECT: Record<string, (t: string) => Expect> = {
  'syscall.DirectoryTraversalMonitoredFileRead': () => ({ 'proc.name': 'cat', 'fd.name': '/etc/passwd', 'fd.nameraw': /\.\.\/.*\.\.\//, 'user.name': 'root' }),
  'syscall.ReadSensitiveFileUntrusted': () => ({ 'proc.name': 'cat', 'fd.name': '/etc/shadow', 'proc.cmdline': 'cat /etc/shadow', 'proc.pname': 'node' }),
  'syscall.RunShellUntrusted': () => ({ 'proc.name': 'sh', 'proc.pname': 'httpd', 'proc.cmdline': 'sh -c echo rae-event-generator > /dev/null' }),
  'syscall.SearchPrivateKeysOrPasswords': (t) => ({ 'proc.name': 'find', 'proc.cmdline': `find ${t} -name id_rsa`, 'evt.type': 'execve' }),
  'syscall.ClearLogActivities': (t) => ({ 'fd.name': join(t, 'auth.log'), 'evt.type': 'openat', 'proc.name': 'node', 'user.name': 'root' }),
  'syscall.RemoveBulkDataFromDisk': () => ({ 'proc.name': 'shred', 'evt.type': 'execve', 'proc.pname': 'node' }),
  'syscall.CreateSymlinkOverSensitiveFiles': (t) => ({ 'evt.arg.target': '/etc', 'evt.arg.linkpath': join(t, 'etc-link'), 'evt.type': /^symlink(at)?$/, 'proc.name': 'node' }),
  'syscall.CreateHardlinkOverSensitiveFiles': (t) => ({ 'evt.arg.oldpath': '/etc/shadow', 'evt.arg.newpath': join(t, 'missing', 'shadow'), 'evt.type': /^link(at)?$/ }),
  'syscall.PtraceAttachedToProcess': () => ({ 'proc.name': 'perl', 'evt.type': 'ptrace', 'proc.pname': 'node' }),
  'syscall.PtraceAntiDebugAttempt': () => ({ 'proc.name': 'perl', 'evt.type': 'ptrace' }),
  'syscall.FindAwsCredentials': (t) => ({ 'proc.name': 'find', 'proc.cmdline': `find ${t} -path */.aws/credentials` }),
  'syscall.ExecutionFromDevShm': () => ({ 'proc.name': 'true', 'proc.exepath': /^\/dev\/shm\/rae-event-generator-\w+\/true$/, 'evt.type': 'execve' }),
  'syscall.FilelessExecutionViaMemfdCreate': () => ({ 'evt.type': 'execve', 'proc.pname': 'node', 'evt.res': 'SUCCESS' }),
  'syscall.DisallowedSshConnectionNonStandardPort': () => ({ 'proc.name': 'ssh', 'fd.rport': 443, 'fd.name': /->198\.51\.100\.7:443$/, 'evt.type': 'connect' }),
  'syscall.ReadSensitiveFileTrustedAfterStartup': () => ({ 'proc.name': 'httpd', 'fd.name': '/etc/shadow' }),
};

for (const action of SYSCALL_ACTIONS) {
  const expect = EXPECT[action.name];
  if (!expect) continue;
  run_(`live: ${action.name} -> ${action.rule}`, async () => {
    const why = action.unavailable?.();
    if (why) {
      process.stderr.write(`!!! live.test.ts: ${action.name} cannot work here: ${why}\n`);
      assert.unreachable(`${action.name} cannot run here: ${why}`);
    }
    rmSync(tmp, { recursive: true, force: true });
    const dir = mkdtempSync(`${tmp}-`);
    await action.run({ tmp: dir, postAudit: async () => undefined });
    const a = await alertOf(action.rule, expect(dir), 300_000);
    assert.is(a.source, 'syscall');
    assert.is(a.output_fields['user.name'] ?? 'root', 'root');
  });
}

run_('live: at least ten different upstream rules fired from real syscalls', () => {
  const rules = new Set(rae.alerts.filter((a) => a.source === 'syscall').map((a) => a.rule));
  const upstream = readFileSync('rules/syscall/falco_rules.yaml', 'utf8');
  const fired = [...rules].filter((r) => upstream.includes(`- rule: ${r}\n`));
  assert.ok(fired.length >= 10, `only ${fired.length}: ${fired.join(', ')}`);
});

run_('live: rae run stops cleanly', async () => {
  assert.is(await rae.stop(), 0, rae.stderr());
  assert.match(rae.stderr(), /module: source syscall stopped/);
  rmSync(root, { recursive: true, force: true });
});

test.run();
