// The Slack output (falcosidekick's `slack`): an incoming-webhook body with one attachment,
// exactly as falcosidekick's newSlackPayload renders it: `outputformat` all (text + fields),
// text, or fields; fields rule, priority, source, hostname, tags, the string output fields
// (short when under 36 characters), time; `messageformat` as the message text; username, icon
// and channel when set. Mattermost reuses the attachment with its own field order.
import { alertText, type Alert } from '../alert.js';
import { DEFAULT_FOOTER, SLACK_COLORS, createChatSender, goTimeString, messageTemplate, renderMessage, stringFields, tagsText } from './chat.js';
import type { OutputSettings } from './settings.js';
import type { Sender } from './types.js';

interface Field {
  title: string;
  value: string;
  short: boolean;
}

/** The fields of a slack/mattermost attachment in falcosidekick's order for `output`. */
export function attachmentFields(a: Alert, order: 'slack' | 'mattermost'): Field[] {
  const f = (title: string, value: string, short = true): Field => ({ title, value, short });
  const fields = [f('rule', a.rule)];
  const host = a.hostname !== '' ? [f('hostname', a.hostname)] : [];
  const tags = a.tags.length > 0 ? [f('tags', tagsText(a))] : [];
  if (order === 'slack') fields.push(f('priority', a.priority), f('source', a.source), ...host, ...tags);
  else fields.push(...host, f('priority', a.priority), f('source', a.source), ...tags);
  for (const [k, v] of stringFields(a)) fields.push(f(k, v, [...v].length < 36));
  fields.push(f('time', goTimeString(a.timeNs), false));
  return fields;
}

/** falcosidekick's slackPayload for one alert (key order and omitempty as its struct tags). */
export function slackAttachmentPayload(a: Alert, s: OutputSettings, order: 'slack' | 'mattermost', message: string, iconUrl: string, channel: string): Record<string, unknown> {
  const format = s.string('outputformat');
  const withFields = format === 'all' || format === 'fields' || format === '';
  const withText = format === 'all' || format === 'text' || format === '';
  const footer = s.string('footer') !== '' ? s.string('footer') : DEFAULT_FOOTER;
  const output = alertText(a);
  const attachment: Record<string, unknown> = { fallback: output, color: SLACK_COLORS[a.priority] ?? '' };
  if (withText && output !== '') attachment.text = output;
  attachment.fields = withFields ? attachmentFields(a, order) : null;
  if (withFields) attachment.footer = footer;
  const payload: Record<string, unknown> = {};
  if (message !== '') payload.text = message;
  if (s.string('username') !== '') payload.username = s.string('username');
  if (iconUrl !== '') payload.icon_url = iconUrl;
  if (channel !== '') payload.channel = channel;
  payload.attachments = [attachment];
  return payload;
}

/** The Slack transport. */
export function createSlackSender(s: OutputSettings): Sender {
  const template = messageTemplate(s);
  return createChatSender(s, (a) => slackAttachmentPayload(a, s, 'slack', renderMessage(template, a), s.string('icon'), s.string('channel')));
}
