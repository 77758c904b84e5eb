// `rae run` where the kernel source cannot run: as an unprivileged user (setpriv to nobody, no
// capabilities) and with kernel BTF hidden (a mount namespace with a tmpfs over /sys/kernel/btf).
// Each time the engine must say why the kernel source is off, start, and keep serving its
// forwarder: a POST /test alert reaches stdout, while /healthz answers 503 (an enabled source that
// is off keeps the engine unready unless syscall.optional; issue 25 item 2).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const isRoot = process.getuid?.() === 0;
const tools = existsSync('/usr/bin/setpriv') && existsSync('/usr/bin/unshare');
if (!isRoot || !tools) process.stderr.write('\n!!! live-off.test.ts: SKIPPING: needs root, setpriv and unshare\n\n');
const asRoot = isRoot && tools ? test : test.skip;

/** Starts rae run behind `prefix`, waits for the end of its start, checks the forwarder, stops it; returns stderr and stdout. */
async function runOff(prefix: string[]): Promise<{ stderr: string; stdout: string; code: number | null; health: number; test: number }> {
  const root = mkdtempSync(join(tmpdir(), 'rae-live-off-'));
  chmodSync(root, 0o777);
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'forwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  chmodSync(cfg, 0o644);
  const argv = [...prefix, process.execPath, 'bin/rae.js', 'run', '--config', cfg, '--state-dir', join(root, 'state')];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const wait = async (ok: () => boolean, what: string) => {
    const deadline = Date.now() + 300_000;
    while (!ok()) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`waiting for ${what}; stderr:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  try {
    await wait(() => /run: started \(/.test(stderr), 'the end of the start');
    const url = /run: forwarder listening on (\S+)/.exec(stderr)![1]!;
    const health = (await fetch(`${url}/healthz`)).status;
    const t = (await fetch(`${url}/test`, { method: 'POST' })).status;
    await wait(() => stdout.includes('"rule":"Test rule"'), 'the test alert on stdout');
    child.kill('SIGTERM');
    return { stderr, stdout, code: await exited, health, test: t };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
}

asRoot('unprivileged user: the kernel source is off (EPERM, why) and the forwarder serves', async () => {
  const r = await runOff(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all']);
  assert.match(r.stderr, /run: kernel \(syscall\) source off: EPERM: loading the probe needs root, or CAP_BPF and CAP_PERFMON \(this process runs as uid 65534 without CAP_BPF and CAP_PERFMON\); the other sources keep running/);
  assert.not.match(r.stderr, /module: source syscall started/);
  assert.equal([r.health, r.test, r.code], [503, 200, 0]);
});

asRoot('kernel BTF hidden: the kernel source is off (ENOBTF, why) and the forwarder serves', async () => {
  const r = await runOff(['unshare', '-m', 'sh', '-c', 'mount -t tmpfs none /sys/kernel/btf && exec "$@"', 'sh']);
  assert.match(r.stderr, /run: kernel \(syscall\) source off: ENOBTF: the kernel exposes no BTF \(\/sys\/kernel\/btf\/vmlinux is missing; it needs CONFIG_DEBUG_INFO_BTF=y\)/);
  assert.not.match(r.stderr, /module: source syscall started/);
  assert.equal([r.health, r.test, r.code], [503, 200, 0]);
});

test.run();
