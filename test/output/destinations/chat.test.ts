// The chat outputs (slack, teams, mattermost, discord, googlechat) against a real local receiver:
// the body must be byte-identical to what falcosidekick's newSlackPayload / newTeamsPayload /
// newMattermostPayload / newDiscordPayload / newGooglechatPayload (outputs/*.go) marshal for the
// same alert — key order of their structs, omitempty, Go's time.Time String(), Go's HTML-safe
// escaping (<, >, & as \u003c ...). The expected texts are written out by hand from those structs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alertText, type Alert } from '../../../host/output/alert.js';
import { startTestForwarder } from '../../../support/forwarder.js';
import { makeTestPki, startReceiver, until, type Receiver } from '../receiver.js';

const ICON = 'https://raw.githubusercontent.com/falcosecurity/falcosidekick/master/imgs/falcosidekick_color.png';
const DEFAULT_ICON = 'https://raw.githubusercontent.com/falcosecurity/falcosidekick/master/imgs/falcosidekick.png';
const FOOTER = 'https://github.com/falcosecurity/falcosidekick';
const LONG = '/etc/<shadow>&/a/path/of/thirty-six/characters/or/more';

/** 2001-01-01T01:10:00Z, the time of falcosidekick's own payload tests. */
const ALERT: Alert = {
  timeNs: 978_311_400_000_000_000n,
  rule: 'Terminal shell in container',
  priority: 'Critical',
  source: 'syscall',
  tags: ['test', 'example'],
  hostname: 'test-host',
  message: 'A shell was spawned (user=root)',
  outputFields: { 'proc.name': 'bash', 'proc.pid': 42, 'fd.name': LONG },
};
/** The alert line, as JSON string contents in Go's escaping. */
const OUT = goEscape(alertText(ALERT));
const LONG_ESC = goEscape(LONG);
const TIME = '2001-01-01 01:10:00 +0000 UTC';

function goEscape(s: string): string {
  return JSON.stringify(s)
    .slice(1, -1)
    .replace(/[<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

async function deliverOne(output: string, settings: Record<string, unknown>, env: NodeJS.ProcessEnv = {}, rx?: Receiver): Promise<{ body: string; contentType: string }> {
  const receiver = rx ?? (await startReceiver());
  const fromEnv = env[`${output.toUpperCase()}_WEBHOOKURL`] !== undefined;
  const t = await startTestForwarder({ stdout: false, outputs: { [output]: fromEnv ? settings : { webhookurl: receiver.url, ...settings } } }, 'node-test-1', env);
  try {
    t.fwd.submit(ALERT);
    await until(() => receiver.requests.length === 1, `the ${output} request`);
    const r = receiver.requests[0]!;
    return { body: r.body.toString('utf8'), contentType: String(r.headers['content-type']) };
  } finally {
    await t.fwd.close();
    if (!rx) await receiver.close();
  }
}

test('slack (outputformat all): falcosidekick attachment with fields, footer, username and icon', async () => {
  const { body, contentType } = await deliverOne('slack', {});
  assert.is(contentType, 'application/json');
  assert.is(
    body,
    `{"username":"Falcosidekick","icon_url":"${ICON}","attachments":[{"fallback":"${OUT}","color":"#ff5400","text":"${OUT}","fields":[` +
      `{"title":"rule","value":"Terminal shell in container","short":true},{"title":"priority","value":"Critical","short":true},` +
      `{"title":"source","value":"syscall","short":true},{"title":"hostname","value":"test-host","short":true},` +
      `{"title":"tags","value":"example, test","short":true},{"title":"fd.name","value":"${LONG_ESC}","short":false},` +
      `{"title":"proc.name","value":"bash","short":true},{"title":"time","value":"${TIME}","short":false}],"footer":"${FOOTER}"}]}`,
  );
});

test('slack (outputformat text, messageformat, channel, from SLACK_* variables): text only, fields null', async () => {
  const rx = await startReceiver();
  try {
    const { body } = await deliverOne(
      'slack',
      {},
      { SLACK_WEBHOOKURL: rx.url, SLACK_OUTPUTFORMAT: 'text', SLACK_MESSAGEFORMAT: 'Rule: {{ .Rule }} Priority: {{ .Priority }} pid={{ index .OutputFields "proc.pid" }}', SLACK_CHANNEL: '#sec', SLACK_USERNAME: 'rae' },
      rx,
    );
    assert.is(body, `{"text":"Rule: Terminal shell in container Priority: Critical pid=42","username":"rae","icon_url":"${ICON}","channel":"#sec","attachments":[{"fallback":"${OUT}","color":"#ff5400","text":"${OUT}","fields":null}]}`);
  } finally {
    await rx.close();
  }
});

test('mattermost: slack attachment in mattermost order (hostname after rule)', async () => {
  const { body } = await deliverOne('mattermost', { outputformat: 'fields', icon: '' });
  assert.is(
    body,
    `{"username":"Falcosidekick","icon_url":"${DEFAULT_ICON}","attachments":[{"fallback":"${OUT}","color":"#ff5400","fields":[` +
      `{"title":"rule","value":"Terminal shell in container","short":true},{"title":"hostname","value":"test-host","short":true},` +
      `{"title":"priority","value":"Critical","short":true},{"title":"source","value":"syscall","short":true},` +
      `{"title":"tags","value":"example, test","short":true},{"title":"fd.name","value":"${LONG_ESC}","short":false},` +
      `{"title":"proc.name","value":"bash","short":true},{"title":"time","value":"${TIME}","short":false}],"footer":"${FOOTER}"}]}`,
  );
});

test('teams over HTTPS (CA from mtlscacert): MessageCard with facts', async () => {
  const pki = makeTestPki();
  const rx = await startReceiver({ tls: { cert: pki.read(pki.serverCertFile), key: pki.read(pki.serverKeyFile) } });
  try {
    const { body } = await deliverOne('teams', { mtlscacert: pki.caFile }, {}, rx);
    assert.is(
      body,
      `{"@type":"MessageCard","summary":"${OUT}","themeColor":"ff9000","sections":[{"activityTitle":"Falco Sidekick","activitySubtitle":"${TIME}","activityImage":"${ICON}","text":"${OUT}","facts":[` +
        `{"name":"rule","value":"Terminal shell in container"},{"name":"priority","value":"Critical"},{"name":"source","value":"syscall"},` +
        `{"name":"hostname","value":"test-host"},{"name":"fd.name","value":"${LONG_ESC}"},{"name":"proc.name","value":"bash"},{"name":"tags","value":"example, test"}]}]}`,
    );
  } finally {
    await rx.close();
    pki.remove();
  }
});

test('teams outputformat text: no facts, text kept', async () => {
  const { body } = await deliverOne('teams', { outputformat: 'text', activityimage: '' });
  assert.is(body, `{"@type":"MessageCard","summary":"${OUT}","themeColor":"ff9000","sections":[{"activityTitle":"Falco Sidekick","activitySubtitle":"${TIME}","text":"${OUT}"}]}`);
});

test('discord: one embed, output fields in code blocks, decimal colour', async () => {
  const { body } = await deliverOne('discord', {});
  assert.is(
    body,
    `{"content":"","avatar_url":"${ICON}","embeds":[{"title":"","url":"","description":"${OUT}","color":"15105570","fields":[` +
      `{"name":"rule","value":"Terminal shell in container","inline":true},{"name":"priority","value":"Critical","inline":true},` +
      `{"name":"source","value":"syscall","inline":true},{"name":"hostname","value":"test-host","inline":true},` +
      `{"name":"fd.name","value":"\`\`\`${LONG_ESC}\`\`\`","inline":true},{"name":"proc.name","value":"\`\`\`bash\`\`\`","inline":true},` +
      `{"name":"tags","value":"example, test","inline":true},{"name":"time","value":"${TIME}","inline":true}]}]}`,
  );
});

test('googlechat: card with keyValue widgets and the empty header; outputformat text sends the message only', async () => {
  const { body } = await deliverOne('googlechat', {});
  assert.is(
    body,
    `{"cards":[{"header":{"title":"","subtitle":""},"sections":[{"widgets":[` +
      `{"keyValue":{"topLabel":"rule","content":"Terminal shell in container"}},{"keyValue":{"topLabel":"priority","content":"Critical"}},` +
      `{"keyValue":{"topLabel":"source","content":"syscall"}},{"keyValue":{"topLabel":"hostname","content":"test-host"}},` +
      `{"keyValue":{"topLabel":"fd.name","content":"${LONG_ESC}"}},{"keyValue":{"topLabel":"proc.name","content":"bash"}},` +
      `{"keyValue":{"topLabel":"tags","content":"example, test"}},{"keyValue":{"topLabel":"time","content":"${TIME}"}}]}]}]}`,
  );
  const text = await deliverOne('googlechat', { outputformat: 'text', messageformat: '{{ .Priority }}: {{ .Rule }} on {{ .Hostname }}' });
  assert.is(text.body, '{"text":"Critical: Terminal shell in container on test-host"}');
});

test('minimumpriority: an alert below it is not sent, the /test alert always is', async () => {
  const rx = await startReceiver();
  const t = await startTestForwarder({ stdout: false, outputs: { slack: { webhookurl: rx.url, minimumpriority: 'emergency' } } });
  try {
    t.fwd.submit(ALERT);
    t.fwd.submit({ ...ALERT, rule: 'Test rule', priority: 'Debug' });
    await until(() => rx.requests.length >= 1, 'the test alert');
  } finally {
    await t.fwd.close(); // delivers whatever was queued
    await rx.close();
  }
  assert.is(rx.requests.length, 1);
  assert.match(rx.requests[0]!.body.toString(), /"value":"Test rule"/);
});

test.run();
