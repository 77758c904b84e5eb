// The Discord output (falcosidekick's `discord`): a webhook body with one embed, as
// falcosidekick's newDiscordPayload renders it: description = the alert line, fields rule,
// priority, source, hostname, each string output field in a ``` block, tags, time (all inline),
// the priority's colour as a decimal string, `icon` as the avatar.
import { alertText, type Alert } from '../alert.js';
import { DEFAULT_ICON_URL, createChatSender, goTimeString, stringFields, tagsText } from './chat.js';
import type { OutputSettings } from './settings.js';
import type { Sender } from './types.js';

const COLORS: Record<string, string> = {
  Emergency: '15158332',
  Alert: '11027200',
  Critical: '15105570',
  Error: '15844367',
  Warning: '12745742',
  Notice: '3066993',
  Informational: '3447003',
  Debug: '12370112',
};

/** falcosidekick's discordPayload for one alert. */
export function discordPayload(a: Alert, s: OutputSettings): Record<string, unknown> {
  const field = (name: string, value: string) => ({ name, value, inline: true });
  const fields = [field('rule', a.rule), field('priority', a.priority), field('source', a.source)];
  if (a.hostname !== '') fields.push(field('hostname', a.hostname));
  for (const [k, v] of stringFields(a)) fields.push(field(k, `\`\`\`${v}\`\`\``));
  if (a.tags.length > 0) fields.push(field('tags', tagsText(a)));
  fields.push(field('time', goTimeString(a.timeNs)));
  return {
    content: '',
    avatar_url: s.string('icon') !== '' ? s.string('icon') : DEFAULT_ICON_URL,
    embeds: [{ title: '', url: '', description: alertText(a), color: COLORS[a.priority], fields }],
  };
}

/** The Discord transport. */
export function createDiscordSender(s: OutputSettings): Sender {
  return createChatSender(s, (a) => discordPayload(a, s));
}
