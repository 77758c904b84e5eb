// The SMTP output (falcosidekick's `smtp`): each alert mailed through `hostport` from `from` to
// every address of `to` (comma-separated), the message built as falcosidekick builds it
// (smtp-message.ts) and sent as is through nodemailer (one pooled connection). `tls` true
// requires STARTTLS, false sends in the clear; `authmechanism` plain logs in with user/password,
// none (or an empty user) sends without AUTH. falcosidekick's oauthbearer, external and
// anonymous mechanisms are not offered: a config naming one is refused at start.
import { createTransport } from 'nodemailer';
import type { OutputSettings } from './settings.js';
import { withDeadline } from './deadline.js';
import { smtpMessage } from './smtp-message.js';
import type { Delivery, OutputContext, Sender } from './types.js';

/** The SMTP transport. */
export function createSmtpSender(s: OutputSettings, _ctx: OutputContext): Sender {
  const hostport = s.string('hostport');
  const m = /^(.*):(\d+)$/.exec(hostport);
  if (!m) throw new Error(`forwarder.outputs.smtp.hostport: expected host:port, not ${JSON.stringify(hostport)}`);
  const mechanism = s.string('authmechanism').toLowerCase();
  if (mechanism !== 'plain' && mechanism !== 'none' && mechanism !== '') throw new Error(`forwarder.outputs.smtp.authmechanism: ${JSON.stringify(mechanism)} is not supported (plain or none)`);
  const from = s.string('from');
  const to = s.string('to');
  const recipients = to
    .replaceAll(' ', '')
    .split(',')
    .filter((x) => x !== '');
  if (from === '' || recipients.length === 0) throw new Error('forwarder.outputs.smtp: from and to are required');
  const html = s.string('outputformat').toLowerCase() !== 'text';
  const timeoutMs = s.number('timeoutms');
  const tls = s.bool('tls');
  const auth = mechanism === 'plain' && s.string('user') !== '' ? { user: s.string('user'), pass: s.string('password') } : undefined;
  const transport = createTransport({
    host: m[1],
    port: Number(m[2]),
    secure: false,
    requireTLS: tls,
    ignoreTLS: !tls,
    auth,
    authMethod: 'PLAIN',
    pool: true,
    maxConnections: 1,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    send(batch, signal) {
      const raw = smtpMessage((batch[0] as Delivery).alert, from, to, html).replaceAll('\n', '\r\n');
      return withDeadline(transport.sendMail({ envelope: { from, to: recipients }, raw }), timeoutMs, signal);
    },
    async close() {
      transport.close();
    },
  };
}
