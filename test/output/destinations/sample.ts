// The alert the protocol output tests send, with what falcosidekick would make of it, and a
// forwarder running one output against a real server.
import type { Alert } from '../../../host/output/alert.js';
import { startTestForwarder, metricLines, type TestForwarder } from '../../../support/forwarder.js';

/** A Critical syscall alert whose text needs escaping in JSON (`<`, `&`, quotes) and in HTML. */
export const SAMPLE: Alert = {
  timeNs: 1_749_208_721_382_570_000n,
  rule: 'Terminal shell in container (A&B)',
  priority: 'Critical',
  source: 'syscall',
  tags: ['shell', 'container', 'mitre_execution'],
  hostname: 'node-1',
  message: 'A shell was spawned in a container <tty> & "quoted" (user=root container=abc123)',
  outputFields: { 'proc.name': 'bash', 'user.name': 'root', 'container.id': 'abc123', 'proc.pid': 4242, 'k8s.ns.name': 'prod', 'proc.tty': true },
};

/** The output line Falco writes for SAMPLE (its `output`), in the local time zone of the test process. */
export function sampleOutputPrefix(): RegExp {
  return /^\d{2}:\d{2}:\d{2}\.382570000: Critical A shell was spawned in a container <tty> & \\"quoted\\" \(user=root container=abc123\)$/;
}

/** A forwarder (no stdout unless asked) with `forwarder.outputs.<name>` = `settings`. */
export function startWithOutput(name: string, settings: Record<string, unknown>, stdout = false): Promise<TestForwarder> {
  return startTestForwarder({ stdout, outputs: { [name]: settings } });
}

/** The sample lines of `name` in the forwarder's metrics. */
export async function metric(t: TestForwarder, name: string): Promise<string[]> {
  return metricLines((await t.metrics.exposition()).body, name);
}

/** How many alerts `destination` counted with `status` (ok or error). */
export async function outcomes(t: TestForwarder, destination: string, status: 'ok' | 'error'): Promise<number> {
  const line = (await metric(t, 'enginesecurity_enginesidekick_outputs_total')).find((l) => l.includes(`destination="${destination}",status="${status}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}
