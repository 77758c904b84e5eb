// The Mattermost output (falcosidekick's `mattermost`): Slack's attachment body (Mattermost
// accepts Slack's format) with falcosidekick's Mattermost field order (rule, hostname, priority,
// source, tags, output fields, time) and its default icon when `icon` is empty.
import { DEFAULT_ICON_URL, createChatSender, messageTemplate, renderMessage } from './chat.js';
import type { OutputSettings } from './settings.js';
import { slackAttachmentPayload } from './slack.js';
import type { Sender } from './types.js';

/** The Mattermost transport. */
export function createMattermostSender(s: OutputSettings): Sender {
  const template = messageTemplate(s);
  const icon = s.string('icon') !== '' ? s.string('icon') : DEFAULT_ICON_URL;
  return createChatSender(s, (a) => slackAttachmentPayload(a, s, 'mattermost', renderMessage(template, a), icon, ''));
}
