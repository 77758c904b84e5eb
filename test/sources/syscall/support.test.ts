// probeSupport() and open errors for real: this process, an unprivileged child (setpriv to uid
// 65534 without capabilities), root without capabilities (libbpf's own refusal), a child whose
// mount namespace hides /sys/kernel/btf, and one whose addon file is replaced by an empty file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON_PATH, probeSupport } from '../../../host/sources/syscall/index.js';

const child = fileURLToPath(new URL('./fixtures/support-child.ts', import.meta.url));
const isRoot = process.getuid?.() === 0;
const canRunProbe = isRoot && existsSync('/sys/kernel/btf/vmlinux') && existsSync(ADDON_PATH);
const asRoot = isRoot && existsSync('/usr/bin/setpriv') && existsSync('/usr/bin/unshare') ? test : test.skip;
if (!isRoot) process.stderr.write('\n!!! support.test.ts: SKIPPING privilege-changing tests: not running as root\n\n');

interface Outcome {
  support: { available: boolean; code?: string; reason?: string };
  open: { ok: boolean; code?: string; message?: string };
  native?: { ok: boolean; code?: string; message?: string };
}

function runChild(prefix: string[], mode = ''): Outcome {
  const out = execFileSync(prefix[0], [...prefix.slice(1), process.execPath, '--import', 'tsx', child, mode], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Outcome;
}

test('probeSupport() in this process agrees with what it can see', () => {
  const s = probeSupport();
  if (canRunProbe) assert.equal(s, { available: true });
  else {
    assert.is(s.available, false);
    if (!s.available) assert.ok(s.reason.length > 20, s.reason);
  }
});

asRoot('unprivileged user: EPERM with the capabilities it needs', () => {
  const r = runChild(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all']);
  assert.is(r.support.available, false);
  assert.is(r.support.code, 'EPERM');
  assert.match(r.support.reason!, /CAP_BPF and CAP_PERFMON/);
  assert.equal([r.open.ok, r.open.code], [false, 'EPERM']);
});

asRoot('root without capabilities: libbpf refuses the load and the addon reports EPERM with its log', () => {
  const r = runChild(['setpriv', '--inh-caps=-all', '--bounding-set=-all'], 'native');
  assert.is(r.support.code, 'EPERM');
  assert.ok(r.native, 'the addon loaded');
  assert.equal([r.native!.ok, r.native!.code], [false, 'EPERM']);
  assert.match(r.native!.message!, /^loading the probe: Operation not permitted/);
  assert.match(r.native!.message!, /libbpf: /, 'libbpf warnings are kept');
});

asRoot('kernel BTF hidden: ENOBTF from the support check', () => {
  const r = runChild(['unshare', '-m', 'sh', '-c', 'mount -t tmpfs none /sys/kernel/btf && exec "$@"', 'sh']);
  assert.equal([r.support.available, r.support.code], [false, 'ENOBTF']);
  assert.match(r.support.reason!, /\/sys\/kernel\/btf\/vmlinux/);
  assert.equal([r.open.ok, r.open.code], [false, 'ENOBTF']);
});

asRoot('broken addon binary: ENOADDON with the loader message', () => {
  if (!existsSync(ADDON_PATH)) return;
  const dir = mkdtempSync(join(tmpdir(), 'rae-addon-'));
  const empty = join(dir, 'empty.node');
  writeFileSync(empty, '');
  try {
    const r = runChild(['unshare', '-m', 'sh', '-c', `mount --bind ${empty} ${ADDON_PATH} && exec "$@"`, 'sh']);
    assert.equal([r.support.available, r.support.code], [false, 'ENOADDON']);
    assert.match(r.support.reason!, /file too short/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
