// The Microsoft Teams output (falcosidekick's `teams`): a MessageCard with one section, as
// falcosidekick's newTeamsPayload renders it: `outputformat` all (text + facts), text, or facts;
// facts rule, priority, source, hostname, the string output fields, tags; `activityimage`.
import { alertText, type Alert } from '../alert.js';
import { createChatSender, goTimeString, stringFields, tagsText } from './chat.js';
import type { OutputSettings } from './settings.js';
import type { Sender } from './types.js';

const COLORS: Record<string, string> = {
  Emergency: 'e20b0b',
  Alert: 'ff5400',
  Critical: 'ff9000',
  Error: 'ffc700',
  Warning: 'ffff00',
  Notice: '5bffb5',
  Informational: '68c2ff',
  Debug: 'ccfff2',
};

/** falcosidekick's teamsPayload for one alert. */
export function teamsPayload(a: Alert, s: OutputSettings): Record<string, unknown> {
  const format = s.string('outputformat');
  const output = alertText(a);
  const section: Record<string, unknown> = { activityTitle: 'Falco Sidekick', activitySubtitle: goTimeString(a.timeNs) };
  if (s.string('activityimage') !== '') section.activityImage = s.string('activityimage');
  section.text = format === 'all' || format === 'text' || format === '' ? output : '';
  if (format === 'all' || format === 'facts' || format === '') {
    const facts = [
      { name: 'rule', value: a.rule },
      { name: 'priority', value: a.priority },
      { name: 'source', value: a.source },
    ];
    if (a.hostname !== '') facts.push({ name: 'hostname', value: a.hostname });
    for (const [k, v] of stringFields(a)) facts.push({ name: k, value: v });
    if (a.tags.length > 0) facts.push({ name: 'tags', value: tagsText(a) });
    section.facts = facts;
  }
  const payload: Record<string, unknown> = { '@type': 'MessageCard' };
  if (output !== '') payload.summary = output;
  payload.themeColor = COLORS[a.priority];
  payload.sections = [section];
  return payload;
}

/** The Teams transport. */
export function createTeamsSender(s: OutputSettings): Sender {
  return createChatSender(s, (a) => teamsPayload(a, s));
}
