// Shared set-up for the forwarder and output tests: the fan-out whose stdout destination writes
// into a captured stream and, when forwarder.enabled, the forwarder's server feeding it on
// 127.0.0.1 port 0, as `rae run` composes them; their own metrics, and captured log lines.
import { PassThrough } from 'node:stream';
import { defaultConfig, type Config } from '../host/config/config.js';
import { startForwarder, type ForwarderServer } from '../host/forwarder/index.js';
import type { Alert } from '../host/output/alert.js';
import { startFanout, type Fanout, type FanoutOptions } from '../host/output/fanout.js';
import { createMetrics, type Metrics } from '../host/metrics/index.js';

/** The fan-out and, when enabled, the server in front of it. */
export interface Forwarder {
  submit(alert: Alert): void;
  /** The server's URL ('' when forwarder.enabled is false). */
  readonly url: string;
  outputs: Fanout['outputs'];
  /** The server first, then the fan-out (as rae run stops them). */
  close(): Promise<void>;
}

/** Starts the fan-out for `opts.config` (a Config's forwarder section) and, when it is enabled, the server feeding it. */
export async function startForwarderWithFanout(opts: FanoutOptions & { config: Config['forwarder'] }): Promise<Forwarder> {
  const fanout = await startFanout(opts);
  let server: ForwarderServer | undefined;
  try {
    if (opts.config.enabled) server = await startForwarder({ ...opts, submit: fanout.submit });
  } catch (err) {
    await fanout.close();
    throw err;
  }
  return {
    submit: fanout.submit,
    url: server?.url ?? '',
    outputs: fanout.outputs,
    async close() {
      await server?.close();
      await fanout.close();
    },
  };
}

/** A running forwarder with its captured outputs. */
export interface TestForwarder {
  fwd: Forwarder;
  metrics: Metrics;
  logs: string[];
  /** Complete stdout lines so far. */
  lines(): string[];
  /** Resolves once stdout holds at least `n` lines (rejects after `ms`). */
  waitForLines(n: number, ms?: number): Promise<string[]>;
}

/** Starts a forwarder on 127.0.0.1:0 with `patch` applied to the forwarder config; falcosidekick's variables are read from `env` only; `extra.alertDatabase` runs the store. */
export async function startTestForwarder(patch: Partial<Config['forwarder']> = {}, hostname = 'node-test-1', env: NodeJS.ProcessEnv = {}, extra: Pick<FanoutOptions, 'alertDatabase'> = {}): Promise<TestForwarder> {
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, address: '127.0.0.1', port: 0, ...patch };
  const metrics = createMetrics({ processMetrics: false });
  const logs: string[] = [];
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const fwd = await startForwarderWithFanout({ config: config.forwarder, metrics, log: (m) => logs.push(m), hostname, stdout: out, env, ...extra });
  const lines = () => text.split('\n').slice(0, -1);
  return {
    fwd,
    metrics,
    logs,
    lines,
    async waitForLines(n, ms = 5000) {
      const deadline = Date.now() + ms;
      while (lines().length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} stdout lines, got ${lines().length}`);
        await new Promise((r) => setTimeout(r, 5));
      }
      return lines();
    },
  };
}

/** The sample lines of one metric in the forwarder's /metrics text. */
export function metricLines(text: string, name: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}
