// Shared set-up for the forwarder tests: a real forwarder on 127.0.0.1 port 0 whose stdout output
// writes into a captured stream, its own metrics, and captured log lines.
import { PassThrough } from 'node:stream';
import { defaultConfig, type Config } from '../../host/config/config.js';
import { startForwarder, type Forwarder } from '../../host/forwarder/index.js';
import { createMetrics, type Metrics } from '../../host/metrics/index.js';

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

/** Starts a forwarder on 127.0.0.1:0 with `patch` applied to the forwarder config; falcosidekick's variables are read from `env` only. */
export async function startTestForwarder(patch: Partial<Config['forwarder']> = {}, hostname = 'node-test-1', env: NodeJS.ProcessEnv = {}): Promise<TestForwarder> {
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, address: '127.0.0.1', port: 0, ...patch };
  const metrics = createMetrics({ processMetrics: false });
  const logs: string[] = [];
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const fwd = await startForwarder({ config, metrics, log: (m) => logs.push(m), hostname, stdout: out, env });
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
