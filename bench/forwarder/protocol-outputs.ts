// Part of scenario `forwarder`: alerts/s each protocol output delivers on loopback to the real
// server (started privately as the tests start it; Loki to a local receiver answering 204), from
// the first submit to the last delivery counted ok. One output at a time, nothing else on.
// Bounded: a fixed number of alerts per output.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultConfig } from '../../host/config/config.js';
import { startFanout } from '../../host/output/fanout.js';
import { createMetrics, type Destination } from '../../host/metrics/index.js';
import type { Alert } from '../../host/output/alert.js';
import { startAlertmanager, startExim, startMosquitto, startNats, startRedis, startRsyslog, type RealServer } from '../../support/real-servers.js';
import { figure, progress } from '../report.js';
import { countDeliveries } from './deliveries.js';

const ALERT: Alert = {
  timeNs: 1_704_196_800_000_000_001n,
  rule: 'Read sensitive file untrusted',
  priority: 'Warning',
  source: 'syscall',
  tags: ['filesystem', 'mitre_credential_access'],
  hostname: 'node-1',
  message: 'Sensitive file opened for reading by non-trusted program (file=/etc/shadow)',
  outputFields: { 'fd.name': '/etc/shadow', 'proc.name': 'cat', 'user.name': 'root' },
};

async function lokiReceiver(): Promise<RealServer> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { port, dir: '', output: () => '', stop, restart: async () => {}, dispose: stop };
}

interface Case {
  name: Destination;
  alerts: number;
  start: () => Promise<RealServer>;
  settings: (s: RealServer) => Record<string, unknown>;
}

const CASES: Case[] = [
  { name: 'alertmanager', alerts: 2000, start: startAlertmanager, settings: (s) => ({ hostport: `http://127.0.0.1:${s.port}`, endpoint: '/api/v2/alerts' }) },
  { name: 'loki', alerts: 5000, start: lokiReceiver, settings: (s) => ({ hostport: `http://127.0.0.1:${s.port}` }) },
  { name: 'nats', alerts: 20000, start: startNats, settings: (s) => ({ hostport: `nats://127.0.0.1:${s.port}` }) },
  { name: 'mqtt', alerts: 5000, start: startMosquitto, settings: (s) => ({ broker: `tcp://127.0.0.1:${s.port}` }) },
  { name: 'redis', alerts: 5000, start: startRedis, settings: (s) => ({ address: `127.0.0.1:${s.port}` }) },
  { name: 'syslog', alerts: 5000, start: startRsyslog, settings: (s) => ({ host: '127.0.0.1', port: String(s.port) }) },
  { name: 'smtp', alerts: 300, start: startExim, settings: (s) => ({ hostport: `127.0.0.1:${s.port}`, tls: false, authmechanism: 'none', from: 'falco@bench.localhost', to: 'sec@bench.localhost' }) },
];

/** Figures `output_<name>_alerts_per_s` of the alertmanager, loki, nats, mqtt, redis, syslog and smtp outputs. */
export async function protocolOutputs(): Promise<void> {
  for (const c of CASES) {
    const server = await c.start();
    const config = defaultConfig({});
    config.forwarder = { ...config.forwarder, enabled: false, stdout: false, queueSize: 100_000, outputs: { [c.name]: c.settings(server) } };
    const metrics = createMetrics({ processMetrics: false });
    const deliveries = countDeliveries(metrics);
    const fwd = await startFanout({ config: config.forwarder, metrics, log: (m) => progress(m), hostname: 'bench', env: {} });
    try {
      fwd.submit(ALERT); // connect and warm up
      await deliveries.reached(c.name, 1);
      const t0 = performance.now();
      for (let i = 0; i < c.alerts; i++) fwd.submit({ ...ALERT, outputFields: { ...ALERT.outputFields, 'proc.pid': i } });
      await deliveries.reached(c.name, c.alerts + 1);
      const seconds = (performance.now() - t0) / 1000;
      const [ok, error] = [deliveries.ok(c.name), deliveries.error(c.name)];
      progress(`${c.name}: ${ok - 1}/${c.alerts} delivered, ${error} failed, ${seconds.toFixed(2)} s`);
      if (error > 0) throw new Error(`${c.name}: ${error} deliveries failed`);
      figure('forwarder', `output_${c.name}_alerts_per_s`, c.alerts / seconds, 'alerts/s', { alerts: c.alerts, server: c.name === 'loki' ? 'local receiver' : 'real, loopback' });
    } finally {
      await fwd.close();
      await server.dispose();
    }
  }
}
