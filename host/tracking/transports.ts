// The two ways the engine's fault events leave: a Sentry envelope POSTed to a configured DSN
// (errorTracking.dsn, any Sentry-protocol server), or, with the API enabled and no DSN, straight
// into the engine's own project of its integrated tracker (self-project.ts): the same checks as
// the collector (the project's setting active and integrated, the key active), the same grouping
// and storage (collector/event.ts, recordErrorEvent), without a round trip through HTTP and TLS.
import { eventToError } from '../api/collector/event.js';
import { getSetting, isActiveKey, recordErrorEvent, type Db } from '../api/db/index.js';
import { isApiError } from '../api/errors.js';
import type { DsnTarget } from './dsn.js';
import type { Transport } from './reporter.js';

/** Envelopes to a DSN's endpoint, the key in X-Sentry-Auth; accepted on HTTP 200. */
export function dsnTransport(target: DsnTarget, version: string): Transport {
  return {
    target: target.envelopeUrl,
    async send(event, signal) {
      const body = `${JSON.stringify({ event_id: event.event_id, sent_at: new Date().toISOString() })}\n${JSON.stringify({ type: 'event' })}\n${JSON.stringify(event)}\n`;
      const res = await fetch(target.envelopeUrl, {
        method: 'POST',
        body,
        signal,
        headers: { 'content-type': 'application/x-sentry-envelope', 'x-sentry-auth': `Sentry sentry_version=7, sentry_client=runtime-audit-engine/${version}, sentry_key=${target.publicKey}` },
      });
      await res.arrayBuffer();
      return res.status === 200;
    },
  };
}

/** Events stored in a project of the API's own database, as its collector stores them. */
export function localTransport(db: Db, project: { id: number; path: string }, publicKey: string): Transport {
  return {
    target: `the integrated error tracking of project ${project.path} (id ${project.id})`,
    async send(event) {
      const setting = await getSetting(db, project.id);
      if (!setting?.enabled || !setting.integrated || !(await isActiveKey(db, project.id, publicKey))) return false;
      const row = eventToError(event, project.id);
      if (isApiError(row)) return false;
      await db.transaction((tx) => recordErrorEvent(tx, row));
      return true;
    },
  };
}
