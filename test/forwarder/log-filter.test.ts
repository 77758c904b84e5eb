// The shipped ClusterLoggingConfig's filter, applied to every stdout and stderr line of a real run
// (as log-shipper sees a pod's log), keeps exactly the alert lines; the FAQ's unanchored pattern
// would also keep stderr lines that contain a `{`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { readManifest } from '../metrics/prom-tools.js';

type Filter = { field: string; operator: string; values: string[] };

test('the logging filter selects exactly the event lines of a run', () => {
  const manifest = readManifest('cluster-logging-config.yaml') as unknown as { spec: { labelFilter: Filter[] } };
  const [filter] = manifest.spec.labelFilter;
  assert.equal([filter?.field, filter?.operator], ['message', 'Regex']);
  const pattern = new RegExp(filter!.values[0]!);

  const run = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'run-forwarder.ts')], { encoding: 'utf8', timeout: 60_000 });
  assert.is(run.status, 0, run.stderr);
  const stdout = run.stdout.split('\n').filter((l) => l !== '');
  const stderr = run.stderr.split('\n').filter((l) => l !== '');

  assert.equal(stdout.map((l) => JSON.parse(l).rule).sort(), ['Detected', 'Some rule', 'Test rule']);
  assert.ok(stderr.filter((l) => l.includes('{')).length >= 3, 'stderr holds lines with braces (debug payloads, answers)');
  assert.ok(stderr.some((l) => l.includes('-> 400 "Please send a valid request body: priority is missing')));

  const all = [...stderr, ...stdout];
  assert.equal(all.filter((l) => pattern.test(l)).sort(), [...stdout].sort());
  // The module FAQ's pattern, unanchored, keeps debug and log lines too.
  assert.ok(all.filter((l) => /\{.*/.test(l)).length > stdout.length);
});

test.run();
