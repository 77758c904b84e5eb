// A fleet for tests (issue 27, item 3): one real `rae forwarder` with its store, query API and
// console on a database location, and two real `rae run` engines posting their alerts to it
// through their webhook output (node-a by forwarder.outputs.webhook.address, node-b by
// falcosidekick's WEBHOOK_ADDRESS and $RAE_HOSTNAME). The forwarder's store has a queue of 3 and
// two retries, so an outage fills and drops. Consumes a temporary directory and a Location;
// produces the running fleet, its addresses and its viewer token (read_api).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { metricLines } from '../../support/forwarder.js';
import type { Location } from '../../support/api/storage.js';
import { startRae, type RaeRun } from './rae-run.js';

/** The `viewer` user's token (scope read_api), made by the forwarder's bootstrap file. */
export const TOKEN = 'glpat-fleet-forwarder-test-0001';

/** POST /test `n` times to an engine's forwarder. */
export async function postTest(engineUrl: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) assert.is((await fetch(`${engineUrl}/test`, { method: 'POST' })).status, 200);
}

/** The central forwarder, its two engines and how to query them. */
export interface Fleet {
  central: RaeRun;
  forwarderUrl: string;
  apiUrl: string;
  /** The fleet's web console (its pages and the query API they read), e.g. http://127.0.0.1:PORT/. */
  consoleUrl: string;
  engines: Array<{ rae: RaeRun; url: string }>;
  get(path: string): Promise<{ statistics: Record<string, number>; results: Record<string, number> & Array<{ hostname: string; rule: string }> }>;
  /** A sample of the forwarder's store destination (0 when absent). */
  storeMetric(name: string, label?: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts the forwarder, then the two engines; stops what started when a start fails. */
export async function startFleet(tmp: string, location: Location): Promise<Fleet> {
  const boot = join(tmp, 'bootstrap.yaml');
  writeFileSync(boot, `users:\n  - username: viewer\n    tokens:\n      - token: ${TOKEN}\n        scope: read_api\n`);
  // a queue of 3 and two retries (100 + 200 ms of backoff): while the database is down the queue fills and drops
  const centralCfg = join(tmp, 'central.yaml');
  writeFileSync(centralCfg, `forwarder:\n  port: 0\n  outputs:\n    store:\n      queuesize: 3\n      retries: 2\n      timeoutms: 2000\napi:\n  port: 0\n  bootstrapFile: ${JSON.stringify(boot)}\n`);
  const running: RaeRun[] = [];
  const close = async () => {
    for (const r of running.reverse()) await r.stop();
  };
  try {
    const central = startRae(['--config', centralCfg, '--state-dir', location.stateDir], [], { command: 'forwarder', env: { DATABASE_URL: location.databaseUrl } });
    running.push(central);
    const forwarderUrl = (await central.waitLog(/forwarder: listening on (\S+)/))[1]!;
    const apiUrl = (await central.waitLog(/forwarder: query API on (\S+)\/api\/v1\/events/))[1]!;
    await central.waitLog(/forwarder: ready \(outputs: stdout, store\)/);
    const consoleUrl = (await central.waitLog(/console: (http\S+)/))[1]!;
    const engine = (name: string, viaConfig: boolean) => {
      const cfg = join(tmp, `${name}.yaml`);
      const hostname = viaConfig ? `hostname: ${name}\n` : '';
      const webhook = viaConfig ? `  outputs:\n    webhook:\n      address: ${forwarderUrl}/\n` : '';
      writeFileSync(cfg, `${hostname}rules:\n  builtIn: []\nforwarder:\n  port: 0\n${webhook}webhook:\n  enabled: false\napi:\n  enabled: false\nsyscall:\n  optional: true\n`);
      const env = viaConfig ? {} : { RAE_HOSTNAME: name, WEBHOOK_ADDRESS: `${forwarderUrl}/` };
      const rae = startRae(['--config', cfg, '--state-dir', join(tmp, `${name}-state`)], [], { env });
      running.push(rae);
      return rae;
    };
    const engines: Fleet['engines'] = [];
    for (const [name, viaConfig] of [
      ['node-a', true],
      ['node-b', false],
    ] as const) {
      const rae = engine(name, viaConfig);
      engines.push({ rae, url: (await rae.waitLog(/run: forwarder listening on (\S+)/))[1]! });
    }
    return {
      central,
      forwarderUrl,
      apiUrl,
      consoleUrl,
      engines,
      get: async (path) => (await fetch(`${apiUrl}${path}`, { headers: { 'private-token': TOKEN } })).json() as ReturnType<Fleet['get']>,
      async storeMetric(name, label = '') {
        const text = await (await fetch(`${forwarderUrl}/metrics`)).text();
        const line = metricLines(text, name).find((l) => l.includes('destination="store"') && l.includes(label));
        return line ? Number(line.split(' ').pop()) : 0;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
