// The Alertmanager output against a real Alertmanager (Debian's prometheus-alertmanager, started
// privately on a loopback port, clustering off): the alert is found through Alertmanager's own
// API (GET /api/v2/alerts) with falcosidekick's labels, severity and annotations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startAlertmanager, waitFor, type RealServer } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, sampleOutputPrefix, startWithOutput } from './sample.js';

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: { state: string };
}

async function alerts(server: RealServer): Promise<AmAlert[]> {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/v2/alerts`);
  return (await res.json()) as AmAlert[];
}

test('POST /api/v2/alerts: the alert is active in Alertmanager with the labels and annotations falcosidekick sets', async () => {
  const server = await startAlertmanager();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('alertmanager', { hostport: `http://127.0.0.1:${server.port}`, endpoint: '/api/v2/alerts', extralabels: { team: 'sec' } }));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'alertmanager', 'ok')) === 1, 'the delivery');
    await waitFor(async () => (await alerts(server)).length === 1, 'the alert in Alertmanager');
    const [a] = (await alerts(server)) as [AmAlert];
    assert.is(a.status.state, 'active');
    assert.equal(a.labels, {
      container_id: 'abc123',
      eventsource: 'syscall',
      evt_time: '1749208721382570000',
      hostname: 'node-1',
      k8s_ns_name: 'prod',
      priority: 'Critical',
      proc_name: 'bash',
      proc_pid: '4242',
      rule: SAMPLE.rule,
      severity: 'critical',
      source: 'falco',
      tags: 'container,mitre_execution,shell',
      team: 'sec',
      user_name: 'root',
    });
    assert.match(a.annotations.info as string, sampleOutputPrefix());
    assert.equal(a.annotations, { info: a.annotations.info, description: a.annotations.info, summary: SAMPLE.rule });
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test('the default endpoint (/api/v1/alerts, as falcosidekick) with a custom severity map', async () => {
  const server = await startAlertmanager();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('alertmanager', { hostport: `http://127.0.0.1:${server.port}`, customseveritymap: { warning: 'page' } }));
    fwd.fwd.submit({ ...SAMPLE, priority: 'Warning', rule: 'Warned' });
    fwd.fwd.submit({ ...SAMPLE, priority: 'Error', rule: 'Errored' });
    await waitFor(async () => (await alerts(server)).length === 2, 'both alerts in Alertmanager');
    const byRule = new Map((await alerts(server)).map((a) => [a.labels.rule, a.labels]));
    assert.equal([byRule.get('Warned')?.severity, byRule.get('Warned')?.priority], ['page', 'Warning']);
    assert.equal([byRule.get('Errored')?.severity, byRule.get('Errored')?.priority], ['warning', 'Error']);
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test.run();
