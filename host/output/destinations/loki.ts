// The Loki output (falcosidekick's `loki`): each alert POSTed to `hostport` + `endpoint`
// (/loki/api/v1/push) as one stream of one entry, in the push API's JSON form
// (https://grafana.com/docs/loki/latest/reference/loki-http-api/#ingest-logs):
// `{"streams":[{"stream":{labels},"values":[["<ns>","<line>"]]}]}`. Labels as falcosidekick
// sets them: rule, source, priority, hostname, tags, plus the string output fields named in
// customfields, templatedfields or extralabels (`.` -> `_`, brackets dropped, quotes removed
// from the value). The line is the alert's output text, or falcosidekick's payload JSON with
// format json. `tenant` sends X-Scope-OrgID; `user` + `apikey` send basic auth.
import { alertText, type Alert } from '../alert.js';
import { compareCodePoints } from '../json-write.js';
import { createHttpPoster } from './http.js';
import type { OutputSettings } from './settings.js';
import { deliveryUuid, goJsonString, sidekickJson } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** What shapes a push besides the alert. */
export interface LokiShape {
  /** Output fields that become labels. */
  labelFields: readonly string[];
  format: 'text' | 'json';
}

/** A field name as a Loki label, as falcosidekick derives it. */
export function lokiLabel(field: string): string {
  return field.replaceAll('.', '_').replaceAll(']', '').replaceAll('[', '');
}

/** The push request body for one alert (`uuid` is used by format json). */
export function lokiBody(a: Alert, shape: LokiShape, uuid: string): string {
  const labels: Record<string, string> = {};
  const set = (k: string, v: string) => Object.defineProperty(labels, k, { value: v, enumerable: true, writable: true, configurable: true });
  set('rule', a.rule);
  set('source', a.source);
  set('priority', a.priority);
  for (const f of shape.labelFields) {
    const v = a.outputFields[f];
    if (typeof v === 'string') set(lokiLabel(f), v.replaceAll('"', ''));
  }
  if (a.hostname !== '') set('hostname', a.hostname);
  if (a.tags.length > 0) set('tags', [...a.tags].sort(compareCodePoints).join(','));
  const keys = Object.keys(labels).sort(compareCodePoints);
  const stream = `{${keys.map((k) => `${goJsonString(k)}:${goJsonString(labels[k] as string)}`).join(',')}}`;
  const line = shape.format === 'json' ? sidekickJson(a, uuid) : alertText(a);
  return `{"streams":[{"stream":${stream},"values":[["${a.timeNs}",${goJsonString(line)}]]}]}`;
}

/** The Loki transport. */
export function createLokiSender(s: OutputSettings, ctx: OutputContext): Sender {
  const format = s.string('format') === 'json' ? 'json' : 'text';
  const shape: LokiShape = {
    labelFields: [...new Set([...(ctx.globalFieldNames ?? []), ...Object.keys(s.map('customfields')), ...Object.keys(s.map('templatedfields')), ...s.list('extralabels')])],
    format,
  };
  const headers: Record<string, string> = { ...s.map('customheaders') };
  if (s.string('tenant') !== '') headers['X-Scope-OrgID'] = s.string('tenant');
  if (s.string('user') !== '' && s.string('apikey') !== '') headers.Authorization = `Basic ${Buffer.from(`${s.string('user')}:${s.string('apikey')}`).toString('base64')}`;
  const url = s.string('hostport').replace(/\/+$/, '') + s.string('endpoint');
  const http = createHttpPoster(s, url, { headers });
  return {
    send: (batch, signal) => {
      const d = batch[0] as Delivery;
      return http.post(lokiBody(d.alert, shape, deliveryUuid(d)), signal);
    },
    close: () => http.close(),
  };
}
