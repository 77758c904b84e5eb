// The Alertmanager output (falcosidekick's `alertmanager`): each alert POSTed to
// `hostport` + `endpoint` (/api/v1/alerts or /api/v2/alerts) as a one-alert array with
// falcosidekick's labels (string and number output fields under label-safe names, source=falco,
// rule, eventsource, hostname, tags, priority, severity) and annotations (info, description,
// summary), the severity from the priority (customseveritymap overrides), and the syscall-drop
// fields (n_drop*) re-prioritised by dropeventthresholds.
import { parsePriority, priorityNumber, type Priority } from '../../engine/priority.js';
import { alertText, type Alert, type OutputFieldValue } from '../alert.js';
import { compareCodePoints } from '../json-write.js';
import { createHttpPoster } from './http.js';
import type { OutputSettings } from './settings.js';
import { goJsonString, goRfc3339Nano, sidekickFields } from './sidekick-payload.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** falcosidekick's default priority -> severity mapping. */
export const DEFAULT_SEVERITY: Record<Priority, string> = {
  Debug: 'information',
  Informational: 'information',
  Notice: 'information',
  Warning: 'warning',
  Error: 'warning',
  Critical: 'critical',
  Alert: 'critical',
  Emergency: 'critical',
};

/** A syscall-drop threshold: a drop count above `value` raises the alert to `priority`. */
export interface DropThreshold {
  value: number;
  priority: Priority;
}

/** What shapes the alert besides the alert itself. */
export interface AlertmanagerShape {
  expiresAfterS: number;
  extraLabels: Record<string, string>;
  extraAnnotations: Record<string, string>;
  severityMap: Partial<Record<Priority, string>>;
  dropDefault: Priority;
  /** Largest first, as falcosidekick sorts them. */
  dropThresholds: DropThreshold[];
}

/** A label name Alertmanager accepts ([a-zA-Z_][a-zA-Z0-9_]*), as falcosidekick derives it from a field name. */
export function safeLabel(name: string): string {
  return name
    .replace(/[^a-zA-Z0-9_]/g, '_')
    .replaceAll('__', '_')
    .replace(/^_+|_+$/g, '');
}

/** Parses `10000:critical, 100:warning` (the dropeventthresholds syntax); a string is the reason it is refused. */
export function parseDropThresholds(text: string): DropThreshold[] | string {
  const out: DropThreshold[] = [];
  for (const item of text.split(',')) {
    if (item.trim() === '') continue;
    const [v, p] = item.split(':').map((x) => x.trim());
    const value = Number(v);
    const priority = parsePriority(p ?? '');
    if (!Number.isInteger(value) || value < 0 || !priority) return `${JSON.stringify(item.trim())} is not <count>:<priority>`;
    out.push({ value, priority });
  }
  return out.sort((a, b) => b.value - a.value);
}

const raise = (p: Priority, to: Priority): Priority => (priorityNumber(to) > priorityNumber(p) ? to : p);

function dropLabel(v: OutputFieldValue, shape: AlertmanagerShape, priority: Priority): { label: string; priority: Priority } | undefined {
  const d = typeof v === 'string' ? Number(v) : typeof v === 'number' || typeof v === 'bigint' ? Number(v) : NaN;
  if (!Number.isInteger(d)) return undefined;
  if (d === 0) return { label: '0', priority: raise(priority, 'Warning') };
  const hit = shape.dropThresholds.find((t) => d > t.value);
  if (hit) return { label: `>${hit.value}`, priority: raise(priority, hit.priority) };
  return { label: String(v), priority: raise(priority, shape.dropDefault) };
}

function jsonMap(m: Record<string, string>): string {
  const keys = Object.keys(m).sort(compareCodePoints);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonString(m[k] as string)}`).join(',')}}`;
}

/** The request body falcosidekick posts for one alert: `[{"labels":{...},"annotations":{...},"endsAt":"..."}]`. */
export function alertmanagerBody(a: Alert, shape: AlertmanagerShape): string {
  const labels: Record<string, string> = {};
  const set = (k: string, v: string) => Object.defineProperty(labels, k, { value: v, enumerable: true, writable: true, configurable: true });
  let priority = a.priority;
  for (const [k, v] of Object.entries(sidekickFields(a))) {
    if (k.startsWith('n_evts')) continue;
    if (k.startsWith('n_drop')) {
      const drop = dropLabel(v, shape, priority);
      if (drop) {
        set(k, drop.label);
        priority = drop.priority;
      }
      continue;
    }
    if (typeof v === 'string') set(safeLabel(k), v);
    else if (typeof v === 'number' || typeof v === 'bigint') set(safeLabel(k), String(v));
  }
  set('source', 'falco');
  set('rule', a.rule);
  set('eventsource', a.source);
  if (a.hostname !== '') set('hostname', a.hostname);
  if (a.tags.length > 0) set('tags', [...a.tags].sort(compareCodePoints).join(','));
  set('priority', priority);
  set('severity', shape.severityMap[priority] ?? DEFAULT_SEVERITY[priority]);
  for (const [k, v] of Object.entries(shape.extraLabels)) set(k, v);
  const output = alertText(a);
  const annotations: Record<string, string> = { info: output, description: output, summary: a.rule, ...shape.extraAnnotations };
  // Go's zero time.Time is not omitted by omitempty: falcosidekick always sends endsAt.
  const endsAt = shape.expiresAfterS !== 0 ? goRfc3339Nano(a.timeNs + BigInt(shape.expiresAfterS) * 1_000_000_000n) : '0001-01-01T00:00:00Z';
  return `[{"labels":${jsonMap(labels)},"annotations":${jsonMap(annotations)},"endsAt":"${endsAt}"}]`;
}

/** The settings' shape; a string is the reason they are refused. */
export function alertmanagerShape(s: OutputSettings): AlertmanagerShape | string {
  const thresholds = parseDropThresholds(s.string('dropeventthresholds'));
  if (typeof thresholds === 'string') return `forwarder.outputs.alertmanager.dropeventthresholds: ${thresholds}`;
  const dropDefault = parsePriority(s.string('dropeventdefaultpriority'));
  if (!dropDefault) return `forwarder.outputs.alertmanager.dropeventdefaultpriority: unknown priority ${JSON.stringify(s.string('dropeventdefaultpriority'))}`;
  const severityMap: Partial<Record<Priority, string>> = {};
  for (const [p, sev] of Object.entries(s.map('customseveritymap'))) {
    const priority = parsePriority(p);
    if (!priority) return `forwarder.outputs.alertmanager.customseveritymap: unknown priority ${JSON.stringify(p)}`;
    severityMap[priority] = sev;
  }
  return {
    expiresAfterS: s.number('expiresafter'),
    extraLabels: s.map('extralabels'),
    extraAnnotations: s.map('extraannotations'),
    severityMap,
    dropDefault,
    dropThresholds: thresholds,
  };
}

/** The Alertmanager transport. */
export function createAlertmanagerSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const shape = alertmanagerShape(s);
  if (typeof shape === 'string') throw new Error(shape);
  const url = s.string('hostport').replace(/\/+$/, '') + s.string('endpoint');
  const http = createHttpPoster(s, url, { headers: s.map('customheaders') });
  return {
    send: (batch, signal) => http.post(alertmanagerBody((batch[0] as Delivery).alert, shape), signal),
    close: () => http.close(),
  };
}
