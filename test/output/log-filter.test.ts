// The shipped ClusterLoggingConfig's filter, applied to every stdout and stderr line of a real
// `rae run` (as log-shipper sees a pod's log), keeps exactly the alert lines; the FAQ's unanchored
// pattern would also keep stderr lines that contain a `{`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startRae } from '../helpers/rae-run.js';
import { readManifest } from '../metrics/prom-tools.js';
import { tempDir } from '../helpers/temp-dir.js';

type Filter = { field: string; operator: string; values: string[] };

/** Runs `rae run` with debug logging, feeds the forwarder, stops it; returns its output lines. */
async function engineRun(): Promise<{ stdout: string[]; stderr: string[]; code: number | null }> {
  const dir = tempDir('rae-logfilter-');
  writeFileSync(join(dir, 'config.yaml'), 'forwarder:\n  port: 0\n  debugLogging: true\napi:\n  enabled: false\nwebhook:\n  enabled: false\n');
  const run = startRae(['--config', join(dir, 'config.yaml'), '--state-dir', join(dir, 'state')]);
  const url = (await run.waitLog(/forwarder listening on (\S+)/, 0, 300_000))[1]!;
  await run.waitLog(/\bready\b/, 0, 300_000);
  const post = async (path: string, body?: string) => (await fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })).status;
  assert.is(await post('/test'), 200);
  assert.is(await post('/', JSON.stringify({ priority: 'Warning', rule: 'Some rule', time: '2024-05-01T10:00:00Z', output: 'x {y}', output_fields: { 'fd.name': '{braces}' } })), 200);
  assert.is(await post('/', '{"rule": "no priority"}'), 400);
  await run.waitAlerts((alerts) => alerts.length >= 2, 'two alert lines', 300_000);
  const code = await run.stop();
  return {
    stdout: run.stdoutLines().filter((l) => l !== ''),
    stderr: run
      .stderr()
      .split('\n')
      .filter((l) => l !== ''),
    code,
  };
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
