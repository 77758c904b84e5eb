// The NATS output (falcosidekick's `nats`): each alert's falcosidekick payload JSON published
// on the subject from `subjecttemplate` (default `falco.<priority>.<rule>`: the priority lower-
// cased, the rule lower-cased with every run of characters outside [a-z0-9] turned into `_`
// and `_` trimmed). Unlike falcosidekick, which connects per alert, one connection is kept
// (the `nats` client reconnects by itself); a publish counts as delivered once the server
// has answered the flush after it. While disconnected an attempt fails at once (nothing is
// buffered in the client, so a retried alert is never published twice).
import { connect, Events, type NatsConnection } from 'nats';
import type { Alert } from '../alert.js';
import type { OutputSettings } from './settings.js';
import { withDeadline } from './deadline.js';
import { deliveryUuid, sidekickJson } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** The subject of an alert, from falcosidekick's template. */
export function natsSubject(template: string, a: Alert): string {
  const rule = a.rule
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (template === '' ? 'falco.<priority>.<rule>' : template).replaceAll('<priority>', a.priority.toLowerCase()).replaceAll('<rule>', rule);
}

/** How long to wait between connection attempts while the server cannot be reached. */
const RECONNECT_MS = 500;

/** The NATS transport. */
export function createNatsSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const servers = s.string('hostport');
  const template = s.string('subjecttemplate');
  const timeoutMs = s.number('timeoutms');
  const encoder = new TextEncoder();
  let nc: NatsConnection | undefined;
  let connected = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let lastError = 'not connected yet';
  let firstConnect: () => void = () => {};
  const connectedOnce = new Promise<void>((resolve) => (firstConnect = resolve));

  async function open(): Promise<void> {
    try {
      const c = await connect({ servers, name: 'runtime-audit-engine', reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: RECONNECT_MS, timeout: timeoutMs });
      if (closed) return void (await c.close());
      nc = c;
      connected = true;
      firstConnect();
      void watch(c);
    } catch (err) {
      lastError = (err as Error).message;
      if (!closed) retry = setTimeout(open, RECONNECT_MS);
    }
  }

  async function watch(c: NatsConnection): Promise<void> {
    for await (const st of c.status()) {
      if (st.type === Events.Disconnect) {
        connected = false;
        lastError = `disconnected from ${String(st.data)}`;
      } else if (st.type === Events.Reconnect) connected = true;
    }
    const why = await c.closed();
    connected = false;
    nc = undefined;
    if (why) lastError = why.message;
    if (!closed) retry = setTimeout(open, RECONNECT_MS);
  }

  void open();
  return {
    // One flush confirms a whole batch; a batch that fails is published again on retry (at least once).
    maxBatch: 100,
    async send(batch, signal) {
      // Alerts of the first moments wait for the first connection (up to timeoutms).
      if (!nc) await withDeadline(connectedOnce, timeoutMs, signal);
      const c = nc;
      if (!c || !connected) return `not connected to ${servers}: ${lastError}`;
      for (const d of batch as Delivery[]) c.publish(natsSubject(template, d.alert), encoder.encode(sidekickJson(d.alert, deliveryUuid(d))));
      return withDeadline(c.flush(), timeoutMs, signal);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = nc;
      nc = undefined;
      // close, not drain: every publish was flushed already, and a drain waits for a server that may be down.
      if (c && !c.isClosed()) await c.close();
    },
  };
}
