// Each protocol output's server stopped mid-stream (the NATS case, with its subscriber, is in
// nats.test.ts): the forwarder keeps taking alerts and stdout gets every one, the down output
// counts its failures and, with its queue full, its drops; after the server is restarted on the
// same port, delivery resumes (counted ok and found on the server).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient } from 'redis';
import { connectAsync } from 'mqtt';
import { readServerFile, startAlertmanager, startExim, startMosquitto, startRedis, startRsyslog, waitFor, type RealServer } from '../../../support/real-servers.js';
import { SAMPLE, metric, outcomes, startWithOutput } from './sample.js';
import type { Alert } from '../../../host/output/alert.js';

interface Case {
  name: string;
  start: () => Promise<RealServer>;
  settings: (s: RealServer) => Record<string, unknown>;
  /** Alerts the server holds now, read back through its own interface (-1 while unreachable). */
  stored: (s: RealServer) => Promise<number>;
  /** Closes a reader the case opened. */
  close?: () => Promise<void>;
  /**
   * Failed attempts at least expected for the 5 queued alerts. Syslog over TCP has no
   * acknowledgement: the first frame written as the server goes away can be lost unseen.
   */
  minFailures: number;
}

const mqttSeen = { n: 0, close: async () => {} };

const CASES: Case[] = [
  {
    name: 'redis',
    start: startRedis,
    settings: (s) => ({ address: `127.0.0.1:${s.port}` }),
    stored: async (s) => {
      const c = createClient({ url: `redis://127.0.0.1:${s.port}`, socket: { reconnectStrategy: false } });
      c.on('error', () => {});
      try {
        await c.connect();
        return await c.lLen('falco');
      } catch {
        return -1;
      } finally {
        c.destroy();
      }
    },
    minFailures: 5,
  },
  {
    name: 'alertmanager',
    start: startAlertmanager,
    settings: (s) => ({ hostport: `http://127.0.0.1:${s.port}`, endpoint: '/api/v2/alerts' }),
    stored: async (s) => {
      try {
        return ((await (await fetch(`http://127.0.0.1:${s.port}/api/v2/alerts`)).json()) as unknown[]).length;
      } catch {
        return -1;
      }
    },
    minFailures: 5,
  },
  {
    name: 'mqtt',
    start: async () => {
      const s = await startMosquitto();
      const client = await connectAsync(`mqtt://127.0.0.1:${s.port}`, { reconnectPeriod: 200 });
      client.on('message', () => mqttSeen.n++);
      await client.subscribeAsync('falco/events', { qos: 1 });
      mqttSeen.close = () => client.endAsync(true);
      return s;
    },
    settings: (s) => ({ broker: `tcp://127.0.0.1:${s.port}`, qos: 1 }),
    stored: async () => mqttSeen.n,
    close: () => mqttSeen.close(),
    minFailures: 5,
  },
  {
    name: 'syslog',
    start: startRsyslog,
    settings: (s) => ({ host: '127.0.0.1', port: String(s.port) }),
    stored: async (s) =>
      readServerFile(s, 'messages.log')
        .split('\n')
        .filter((l) => l !== '').length,
    minFailures: 4,
  },
  {
    name: 'smtp',
    start: startExim,
    settings: (s) => ({ hostport: `127.0.0.1:${s.port}`, tls: false, authmechanism: 'none', from: 'falco@rae-test.localhost', to: 'sec@rae-test.localhost' }),
    stored: async (s) =>
      readServerFile(s, 'mail', 'mbox')
        .split('\n')
        .filter((l) => l.startsWith('From falco@')).length,
    minFailures: 5,
  },
];

const numbered = (i: number): Alert => ({ ...SAMPLE, rule: `Rule ${i}`, outputFields: { 'proc.pid': i } });

for (const c of CASES) {
  test(`${c.name}: server stopped mid-stream, failures and drops counted, stdout unaffected, delivery resumes after a restart`, async () => {
    const server = await c.start();
    let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
    try {
      const fwd = (t = await startWithOutput(c.name, { ...c.settings(server), retries: 0, queuesize: 5, timeoutms: 3000 }, true));
      fwd.fwd.submit(numbered(0));
      await waitFor(async () => (await c.stored(server)) === 1, `the first alert on the ${c.name} server`);

      await server.stop();
      // 20 alerts in one tick: 5 fit the queue, 15 are dropped; the 5 are attempted while the server is down.
      for (let i = 1; i <= 20; i++) fwd.fwd.submit(numbered(i));
      await waitFor(async () => (await outcomes(fwd, c.name, 'ok')) + (await outcomes(fwd, c.name, 'error')) === 6, 'the 5 queued alerts to be tried');
      assert.ok((await outcomes(fwd, c.name, 'error')) >= c.minFailures, `at least ${c.minFailures} failures counted`);
      assert.ok((await metric(fwd, 'enginesecurity_enginesidekick_output_dropped_total')).includes(`enginesecurity_enginesidekick_output_dropped_total{destination="${c.name}"} 15`));
      const lines = await fwd.waitForLines(21, 300_000);
      for (let i = 0; i <= 20; i++)
        assert.ok(
          lines.some((l) => JSON.parse(l).rule === `Rule ${i}`),
          `stdout has Rule ${i}`,
        );

      await server.restart();
      const okBefore = await outcomes(fwd, c.name, 'ok');
      const storedBefore = await c.stored(server); // what survived the restart (files do, memory does not)
      let i = 100;
      await waitFor(async () => {
        fwd.fwd.submit(numbered(++i));
        await new Promise((r) => setTimeout(r, 200));
        return (await c.stored(server)) > storedBefore;
      }, `an alert on the restarted ${c.name} server`);
      // The server may store the alert a moment before its acknowledgement reaches the output.
      await waitFor(async () => (await outcomes(fwd, c.name, 'ok')) > okBefore, `the delivery to the restarted ${c.name} server counted`);
    } finally {
      await t?.fwd.close();
      await c.close?.();
      await server.dispose();
    }
  });
}

test.run();
