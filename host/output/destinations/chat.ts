// What the chat outputs (slack, mattermost, teams, discord, googlechat) share: falcosidekick's
// view of an alert (FalcoPayload: Output with its time/priority prefix, Priority's name, Go's
// time.Time String()), the string-valued output fields in sorted order, the colours, the
// messageformat template, and Go's encoding/json text (it escapes <, >, &, U+2028, U+2029), so
// the bodies are byte-identical to falcosidekick's. Each output posts one JSON body per alert.
import { alertText, type Alert } from '../alert.js';
import { toWellFormed } from '../json-write.js';
import { rfc3339Nano } from '../time.js';
import { createHttpPoster } from './http.js';
import type { OutputSettings } from './settings.js';
import { parseTemplate, type Template } from './template.js';
import type { Delivery, Sender } from './types.js';

/** falcosidekick's DefaultFooter. */
export const DEFAULT_FOOTER = 'https://github.com/falcosecurity/falcosidekick';
/** falcosidekick's DefaultIconURL (used when an icon setting is empty). */
export const DEFAULT_ICON_URL = 'https://raw.githubusercontent.com/falcosecurity/falcosidekick/master/imgs/falcosidekick.png';

/** Go's time.Time.String() of a UTC time: `2001-01-01 01:10:00.5 +0000 UTC` (fraction without trailing zeros). */
export function goTimeString(ns: bigint): string {
  const iso = rfc3339Nano(ns); // YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ
  const [date, rest] = iso.slice(0, -1).split('T') as [string, string];
  const [clock, frac] = rest.split('.') as [string, string];
  const f = frac.replace(/0+$/, '');
  return `${date} ${clock}${f ? `.${f}` : ''} +0000 UTC`;
}

/** The alert's string-valued output fields, sorted by key (falcosidekick's getSortedStringKeys). */
export function stringFields(a: Alert): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const k of Object.keys(a.outputFields).sort()) {
    const v = a.outputFields[k];
    if (typeof v === 'string') out.push([k, v]);
  }
  return out;
}

/** Tags sorted, joined with ", " (falcosidekick's tags field); '' when there are none. */
export function tagsText(a: Alert): string {
  return [...a.tags].sort().join(', ');
}

/** falcosidekick's slack/mattermost attachment colours. */
export const SLACK_COLORS: Record<string, string> = {
  Emergency: '#e20b0b',
  Alert: '#ff5400',
  Critical: '#ff5400',
  Error: '#e20b0b',
  Warning: '#ffc700',
  Notice: '#5bffb5',
  Informational: '#68c2ff',
  Debug: '#ccfff2',
};

/** Go's encoding/json text of a value (HTML-safe escaping, lone surrogates as U+FFFD). */
function goJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'string' ? toWellFormed(v) : v)).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The messageformat template (`{{ .Rule }}`, `{{ .Priority }}`, `{{ index .OutputFields "k" }}` ...), or undefined when the setting is empty. */
export function messageTemplate(s: OutputSettings): Template | undefined {
  const text = s.string('messageformat');
  return text === '' ? undefined : parseTemplate(text);
}

/** Renders messageformat with the alert's FalcoPayload members. */
export function renderMessage(t: Template | undefined, a: Alert): string {
  if (!t) return '';
  return t({
    Output: alertText(a),
    Priority: a.priority,
    Rule: a.rule,
    Time: goTimeString(a.timeNs),
    Source: a.source,
    Hostname: a.hostname,
    Tags: [...a.tags].sort(),
    OutputFields: a.outputFields,
  });
}

/** A sender posting `payload(alert)` as Go JSON to the output's webhookurl. */
export function createChatSender(s: OutputSettings, payload: (a: Alert) => unknown): Sender {
  const http = createHttpPoster(s, s.string('webhookurl'));
  return {
    send: (batch, signal) => http.post(goJson(payload((batch[0] as Delivery).alert)), signal),
    close: () => http.close(),
  };
}
