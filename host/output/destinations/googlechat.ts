// The Google Chat output (falcosidekick's `googlechat`): `outputformat` text sends only the
// messageformat text; all sends a card whose one section has a keyValue widget per fact (rule,
// priority, source, hostname, the string output fields, tags, time), as falcosidekick's
// newGooglechatPayload renders it (its empty header included: Go's omitempty keeps structs).
import type { Alert } from '../alert.js';
import { createChatSender, goTimeString, messageTemplate, renderMessage, stringFields, tagsText } from './chat.js';
import type { OutputSettings } from './settings.js';
import type { Template } from './template.js';
import type { Sender } from './types.js';

/** falcosidekick's googlechatPayload for one alert. */
export function googlechatPayload(a: Alert, s: OutputSettings, template: Template | undefined): Record<string, unknown> {
  const text = renderMessage(template, a);
  const payload: Record<string, unknown> = {};
  if (text !== '') payload.text = text;
  if (s.string('outputformat') === 'text') return payload;
  const kv = (topLabel: string, content: string) => ({ keyValue: { topLabel, content } });
  const widgets = [kv('rule', a.rule), kv('priority', a.priority), kv('source', a.source)];
  if (a.hostname !== '') widgets.push(kv('hostname', a.hostname));
  for (const [k, v] of stringFields(a)) widgets.push(kv(k, v));
  if (a.tags.length > 0) widgets.push(kv('tags', tagsText(a)));
  widgets.push(kv('time', goTimeString(a.timeNs)));
  payload.cards = [{ header: { title: '', subtitle: '' }, sections: [{ widgets }] }];
  return payload;
}

/** The Google Chat transport. */
export function createGooglechatSender(s: OutputSettings): Sender {
  const template = messageTemplate(s);
  return createChatSender(s, (a) => googlechatPayload(a, s, template));
}
