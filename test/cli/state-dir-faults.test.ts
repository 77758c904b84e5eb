// Fault injection: the state directory read-only or full, on a small tmpfs this test mounts (and
// unmounts after). Documented outcomes (docs/security.md "Faults"):
// - read-only and empty: `rae run` exits 1 naming the directory it cannot create and why (EROFS);
// - read-only with the state a first run left (generated TLS, resources, module cache): it runs,
//   and a webhook batch answered 200 is evaluated in full (0 lost);
// - full: `rae run` exits 1 naming ENOSPC and leaves no half-made resources directory behind, so
//   once there is room the next start seeds it and runs.
// Needs mount(2) (root); without it the tests say so and skip, loudly.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { webhookClient } from '../../host/generator/post.js';
import { freePort } from '../../support/real-servers.js';
import { startRae } from '../helpers/rae-run.js';

const tmp = mkdtempSync(join(tmpdir(), 'rae-statedir-'));
const RULES = join(tmp, 'rules.yaml');
writeFileSync(RULES, '- rule: Every audit event\n  desc: d\n  condition: ka.auditid != ""\n  output: seen %ka.auditid\n  priority: Warning\n  source: k8s_audit\n');

/** A tmpfs of `size` at a new directory, or undefined when this process cannot mount. */
function tmpfs(size: string): string | undefined {
  const dir = mkdtempSync(join(tmp, 'mnt-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) return dir;
  console.warn(`SKIPPED: cannot mount a tmpfs (${r.stderr.trim() || r.error?.message}); the state-directory faults need root`);
  rmdirSync(dir);
  return undefined;
}
const unmount = (dir: string) => {
  spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
};

async function config(): Promise<{ cfg: string; port: number }> {
  const port = await freePort();
  const cfg = join(tmp, `run-${port}.yaml`);
  writeFileSync(cfg, `rules:\n  builtIn: []\n  files: [${RULES}]\nforwarder:\n  enabled: false\napi:\n  enabled: false\nwebhook:\n  port: ${port}\n`);
  return { cfg, port };
}

/** Runs until ready, posts one batch of `n` events, and returns the auditIDs seen as alerts. */
async function runAndPost(stateDir: string, n: number): Promise<{ acknowledged: boolean; seen: Set<string> }> {
  const { cfg, port } = await config();
  const rae = startRae(['--config', cfg, '--state-dir', stateDir]);
  try {
    await rae.waitLog(/\bready\b/);
    const { caPem: ca, certPem: cert, keyPem: key } = webhookClient(join(stateDir, 'webhook-tls'));
    const agent = new Agent({ connect: { ca, cert, key } });
    const items = Array.from({ length: n }, (_, i) => ({ auditID: `e${i}`, stage: 'ResponseComplete', verb: 'get', requestURI: '/api', user: { username: 'u' } }));
    const res = await request(`https://127.0.0.1:${port}/orchestrator-audit`, { method: 'POST', body: JSON.stringify({ kind: 'EventList', items }), headers: { 'content-type': 'application/json' }, dispatcher: agent });
    await res.body.text();
    await agent.close();
    if (res.statusCode === 200) await rae.waitAlerts((a) => a.length >= n, `${n} alerts`);
    assert.is(await rae.stop(), 0, rae.stderr());
    return { acknowledged: res.statusCode === 200, seen: new Set(rae.alerts.map((a) => String(a.output_fields['ka.auditid']))) };
  } finally {
    await rae.stop();
  }
}

function runExpectingFailure(stateDir: string, cfg: string): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/rae.js', 'run', '--config', cfg, '--state-dir', stateDir], { encoding: 'utf8', timeout: 600_000 });
  return { status: r.status, stderr: r.stderr };
}

test('state directory read-only and empty: rae run exits 1 naming the directory and EROFS', async () => {
  const dir = tmpfs('1m');
  if (!dir) return;
  try {
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const r = runExpectingFailure(dir, (await config()).cfg);
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stderr, `run: failed to start: cannot create the resources directory ${dir}/resources: ${dir} is on a read-only file system (EROFS)`);
  } finally {
    unmount(dir);
  }
});

test('state directory made read-only after a first run: rae run runs on it and evaluates every acknowledged event', async () => {
  const dir = tmpfs('4m');
  if (!dir) return;
  try {
    assert.ok((await runAndPost(dir, 10)).acknowledged, 'the first run, on a writable directory');
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const { acknowledged, seen } = await runAndPost(dir, 200);
    assert.ok(acknowledged);
    const lost = Array.from({ length: 200 }, (_, i) => `e${i}`).filter((id) => !seen.has(id));
    assert.is(lost.length, 0, `lost: ${lost.slice(0, 5)}`);
  } finally {
    unmount(dir);
  }
});

test('state directory full: rae run exits 1 naming ENOSPC, leaves no half-made resources directory, and starts once there is room', async () => {
  const dir = tmpfs('256k');
  if (!dir) return;
  try {
    spawnSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=4k', 'count=1000']); // fills it (dd stops at ENOSPC)
    const r = runExpectingFailure(dir, (await config()).cfg);
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stderr, /run: failed to start: .*\(ENOSPC\)/);
    assert.not.ok(existsSync(join(dir, 'resources')), 'no resources directory without its ModuleConfig');
    rmSync(join(dir, 'filler'));
    const { acknowledged, seen } = await runAndPost(dir, 50);
    assert.ok(acknowledged);
    assert.is(seen.size, 50);
  } finally {
    unmount(dir);
  }
});

test.after(() => rmSync(tmp, { recursive: true, force: true }));

test.run();
