// Fault injection: the kernel ring buffer overruns. A 64 KiB ring (a few hundred records) and a
// child that opens a file 20,000 times while this process's event loop is blocked (spawnSync:
// the consumer cannot drain until the child has exited), so the kernel must drop records.
// Documented outcome (docs/security.md "Faults"): every record the kernel could not queue is
// counted in enginesecurity_engine_events_dropped_total{source="syscall",reason="kernel_lost"}
// (equal to the probe's own lost counter), reported by the internal drop alert with the same
// number and logged; never silent. Root and a BTF kernel only; otherwise skipped, loudly.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMetrics } from '../../../host/metrics/index.js';
import type { Alert } from '../../../host/output/alert.js';
import { DetectionEngine } from '../../../host/runtime/detection-engine.js';
import { KernelIngest } from '../../../host/sources/syscall/ingest.js';
import { startSyscallSource } from '../../../host/sources/syscall/source.js';
import { metricValue } from '../../../support/audit-webhook.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('ring-overrun.test.ts');
const run = gate.run ? test : test.skip;

run('ring buffer overrun: every lost record counted in the metric and in the drop alert, none silent', async () => {
  const engine = new DetectionEngine({ ruleMatching: 'all', minPriority: 'Debug', hostname: 'h', onAlert: () => {}, kernel: new KernelIngest({ hostname: 'h' }) });
  const load = await engine.load([{ name: 'r.yaml', text: '- rule: Opens\n  desc: d\n  condition: evt.type in (open, openat) and fd.name = /etc/hostname\n  output: o %fd.name\n  priority: INFO\n' }]);
  assert.ok(load.swapped, JSON.stringify(load.errors));
  const metrics = createMetrics({ processMetrics: false });
  const alerts: Alert[] = [];
  const logs: string[] = [];
  const source = startSyscallSource({ engine, metrics, log: (m) => logs.push(m), submit: (a) => alerts.push(a), hostname: 'h', capture: { ringBufferBytes: 64 * 1024, wakeupBytes: 16 * 1024 }, dropAlertIntervalMs: 0 });
  try {
    const child = spawnSync('sh', ['-c', 'i=0; while [ $i -lt 20000 ]; do : < /etc/hostname; i=$((i+1)); done'], { stdio: 'ignore' });
    assert.is(child.status, 0);
    const lost = source.stats().lost;
    assert.ok(lost > 0, 'the ring overran');
    // Other processes of a busy machine keep overrunning the small ring after the child exits, so
    // the probe's lost counter, the metric and the drop alerts are compared when they have caught
    // up with each other (each reading taken together), not against the count read above.
    const reported = () => alerts.reduce((n, a) => n + Number(a.outputFields.n_drops_kernel ?? 0), 0);
    const deadline = Date.now() + 300_000;
    let seen = { probe: 0, metric: 0, alerts: 0 };
    for (;;) {
      const probe = source.stats().lost;
      seen = { probe, metric: await metricValue(metrics, 'enginesecurity_engine_events_dropped_total', { source: 'syscall', reason: 'kernel_lost' }), alerts: reported() };
      if ((seen.metric === probe && seen.alerts === probe) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(seen.probe >= lost);
    assert.is(seen.metric, seen.probe, 'the metric counts every lost record');
    assert.is(seen.alerts, seen.probe, 'the drop alerts report every lost record');
    assert.match(logs.join('\n'), /syscall: \d+ kernel event\(s\) lost \(ring buffer full\)/);
  } finally {
    await source.stop();
    await engine.close();
  }
});

test.run();
