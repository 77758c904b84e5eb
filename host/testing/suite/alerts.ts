// Alerts as upstream's suite runner receives them: a loopback HTTP server that Falco's http_output
// (here the engine's webhook output) posts each alert's JSON to, the alerts kept per test id (found
// in the `proc.env` output field, FALCO_EVENT_GENERATOR_TEST_ID=<uuid>), and the match of a test's
// expectation: the rule name plus every key of expectedOutcome (source, hostname, priority
// case-insensitively, each output field as a string). Consumes HTTP posts; produces matches and a
// readable diff of expected against received.
import { createServer, type Server } from 'node:http';
import type { SuiteTest } from './loader.js';
import { TEST_ID_ENV } from './perform.js';

/** An alert as the engine posts it (Falco's JSON layout). */
export interface ReceivedAlert {
  rule: string;
  source?: string;
  hostname?: string;
  priority?: string;
  output_fields?: Record<string, unknown>;
}

const ID = new RegExp(`(?:^|\\s)${TEST_ID_ENV}=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})`);

/** The test id an alert carries in its proc.env output field, if any. */
function testIdOf(a: ReceivedAlert): string | undefined {
  const env = a.output_fields?.['proc.env'];
  return typeof env === 'string' ? ID.exec(env)?.[1] : undefined;
}

/** The receiving server and the alerts by test id. */
export class AlertReceiver {
  private readonly byTest = new Map<string, ReceivedAlert[]>();
  private readonly waiters = new Set<() => void>();
  private constructor(
    private readonly server: Server,
    /** The URL the engine posts to. */
    readonly url: string,
  ) {}

  /** Listens on `address` (host:port; default 127.0.0.1 on a free port). */
  static async start(address?: { host: string; port: number }): Promise<AlertReceiver> {
    let self: AlertReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(200).end();
        try {
          self?.add(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedAlert);
        } catch {
          // not an alert: ignored, as upstream's retriever ignores what it cannot decode
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address?.port ?? 0, address?.host ?? '127.0.0.1', () => resolve());
    });
    const a = server.address();
    const port = typeof a === 'object' && a ? a.port : 0;
    const host = address?.host ?? '127.0.0.1';
    self = new AlertReceiver(server, `http://${host.includes(':') ? `[${host}]` : host}:${port}/`);
    return self;
  }

  private add(a: ReceivedAlert): void {
    const id = testIdOf(a);
    if (id === undefined) return;
    const list = this.byTest.get(id) ?? [];
    list.push(a);
    this.byTest.set(id, list);
    for (const w of this.waiters) w();
  }

  /** The alerts of a test so far. */
  alerts(testId: string): ReceivedAlert[] {
    return this.byTest.get(testId) ?? [];
  }

  /** Resolves once `ok` holds for the test's alerts, or at the deadline (false). */
  waitFor(testId: string, ok: (alerts: ReceivedAlert[]) => boolean, timeoutMs: number): Promise<boolean> {
    if (ok(this.alerts(testId))) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!ok(this.alerts(testId))) return;
        done(true);
      };
      const timer = setTimeout(() => done(false), timeoutMs);
      const done = (v: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(v);
      };
      this.waiters.add(check);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}

/** A field an alert does not match: expected against got. */
interface Mismatch {
  field: string;
  expected: string;
  got: string | undefined;
}

/** What does not match in one alert of the test's rule ([] = it matches). */
function mismatches(test: SuiteTest, a: ReceivedAlert): Mismatch[] {
  const e = test.expectedOutcome ?? {};
  const out: Mismatch[] = [];
  if (e.source !== undefined && a.source !== e.source) out.push({ field: 'source', expected: e.source, got: a.source });
  if (e.hostname !== undefined && a.hostname !== e.hostname) out.push({ field: 'hostname', expected: e.hostname, got: a.hostname });
  if (e.priority !== undefined && a.priority?.toLowerCase() !== e.priority.toLowerCase()) out.push({ field: 'priority', expected: e.priority, got: a.priority });
  for (const [k, v] of Object.entries(e.outputFields ?? {})) {
    const got = a.output_fields?.[k];
    const text = got === undefined ? undefined : got === null ? '<NA>' : String(got);
    if (text !== v) out.push({ field: k, expected: v, got: text });
  }
  return out;
}

/** Whether one received alert matches the test: its rule and every declared key. */
export function matchesTest(test: SuiteTest, alerts: readonly ReceivedAlert[]): boolean {
  return alerts.some((a) => a.rule === test.rule && mismatches(test, a).length === 0);
}

/** The readable diff of a failed expectation: what was expected, then each alert of the test and what differs. */
export function expectationDiff(test: SuiteTest, alerts: readonly ReceivedAlert[]): string {
  const e = test.expectedOutcome ?? {};
  const want = [`rule ${JSON.stringify(test.rule)}`];
  for (const k of ['source', 'hostname', 'priority'] as const) if (e[k] !== undefined) want.push(`${k} ${e[k]}`);
  for (const [k, v] of Object.entries(e.outputFields ?? {})) want.push(`${k}=${v}`);
  const lines = [`expected an alert: ${want.join(', ')}`];
  if (alerts.length === 0) lines.push('got: no alert from the test’s processes');
  else lines.push(`got ${alerts.length} alert(s) from the test’s processes:`);
  for (const a of alerts) {
    if (a.rule !== test.rule) {
      lines.push(`  - rule ${JSON.stringify(a.rule)} (another rule)`);
      continue;
    }
    const diff = mismatches(test, a).map((m) => `${m.field}: expected ${JSON.stringify(m.expected)}, got ${m.got === undefined ? '(absent)' : JSON.stringify(m.got)}`);
    lines.push(`  - rule ${JSON.stringify(a.rule)}: ${diff.join('; ')}`);
  }
  return lines.join('\n');
}
