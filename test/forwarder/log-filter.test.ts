// The shipped ClusterLoggingConfig's filter, applied to every stdout and stderr line of a real
// `rae run` (as log-shipper sees a pod's log), keeps exactly the alert lines; the FAQ's unanchored
// pattern would also keep stderr lines that contain a `{`.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readManifest } from '../metrics/prom-tools.js';

type Filter = { field: string; operator: string; values: string[] };

/** Runs `rae run` with debug logging, feeds the forwarder, stops it; returns its output lines. */
async function engineRun(): Promise<{ stdout: string[]; stderr: string[]; code: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'rae-logfilter-'));
  writeFileSync(join(dir, 'config.yaml'), 'forwarder:\n  port: 0\n  debugLogging: true\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  const child = spawn(process.execPath, ['bin/rae.js', 'run', '--config', join(dir, 'config.yaml'), '--state-dir', join(dir, 'state')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rae run not ready in 60 s:\n${err}`)), 60_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /forwarder listening on (\S+)/.exec(err);
      if (m && /\bready\b/.test(err)) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  const post = async (path: string, body?: string) => (await fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status;
  assert.is(await post('/test'), 200);
  assert.is(await post('/', JSON.stringify({ priority: 'Warning', rule: 'Some rule', time: '2024-05-01T10:00:00Z', output: 'x {y}', output_fields: { 'fd.name': '{braces}' } })), 200);
  assert.is(await post('/', '{"rule": "no priority"}'), 400);
  const deadline = Date.now() + 10_000;
  while (out.split('\n').filter(Boolean).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const code = await new Promise<number | null>((resolve) => {
    child.on('exit', (c) => resolve(c));
    child.kill('SIGTERM');
  });
  return { stdout: out.split('\n').filter((l) => l !== ''), stderr: err.split('\n').filter((l) => l !== ''), code };
}

test('the logging filter selects exactly the event lines of a rae run', async () => {
  const manifest = readManifest('cluster-logging-config.yaml') as unknown as { spec: { labelFilter: Filter[] } };
  const [filter] = manifest.spec.labelFilter;
  assert.equal([filter?.field, filter?.operator], ['message', 'Regex']);
  const pattern = new RegExp(filter!.values[0]!);

  const run = await engineRun();
  assert.is(run.code, 0, run.stderr.join('\n'));
  assert.equal(run.stdout.map((l) => JSON.parse(l).rule).sort(), ['Some rule', 'Test rule']);
  assert.ok(run.stderr.filter((l) => l.includes('{')).length >= 2, 'stderr holds lines with braces (debug payloads)');

  const all = [...run.stderr, ...run.stdout];
  assert.equal(all.filter((l) => pattern.test(l)).sort(), [...run.stdout].sort());
  // The module FAQ's pattern, unanchored, keeps debug lines too.
  assert.ok(all.filter((l) => /\{.*/.test(l)).length > run.stdout.length);
});

test.run();
