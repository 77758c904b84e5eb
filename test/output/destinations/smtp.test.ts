// The SMTP output against a real exim4 (Debian's exim4-daemon-light, run as a private daemon
// with its own config: accepts mail on a loopback port, appends it to an mbox in its temp dir):
// the mail arrives for every recipient with falcosidekick's subject, headers and bodies.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readServerFile, startExim, waitFor, type RealServer } from '../../../support/real-servers.js';
import { SAMPLE, outcomes, startWithOutput } from './sample.js';
import { smtpMessage } from '../../../host/output/destinations/smtp-message.js';
import { alertText } from '../../../host/output/alert.js';

/** The messages of an mbox, split at its `From ` separator lines, each as headers and body. */
function mbox(text: string): Array<{ headers: string[]; body: string }> {
  return text
    .split(/^From \S+ .*\n/m)
    .filter((m) => m !== '')
    .map((m) => {
      const cut = m.indexOf('\n\n');
      return { headers: m.slice(0, cut).split('\n'), body: m.slice(cut + 2) };
    });
}

const settings = (server: RealServer, extra: Record<string, unknown> = {}) => ({
  hostport: `127.0.0.1:${server.port}`,
  tls: false,
  authmechanism: 'none',
  from: 'falco@rae-test.localhost',
  to: 'sec@rae-test.localhost, oncall@rae-test.localhost',
  ...extra,
});

test('html (default): one mail per recipient, subject [Priority] output, multipart text + HTML as falcosidekick renders them', async () => {
  const server = await startExim();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('smtp', settings(server)));
    fwd.fwd.submit(SAMPLE);
    await waitFor(async () => (await outcomes(fwd, 'smtp', 'ok')) === 1, `the delivery (exim: ${server.output()})`);
    await waitFor(() => mbox(readServerFile(server, 'mail', 'mbox')).length === 2, 'both copies in the mailbox');
    const mails = mbox(readServerFile(server, 'mail', 'mbox'));
    assert.equal(mails.map((m) => m.headers.find((h) => h.startsWith('Envelope-to:'))).sort(), ['Envelope-to: oncall@rae-test.localhost', 'Envelope-to: sec@rae-test.localhost']);
    const mail = mails[0] as { headers: string[]; body: string };
    for (const h of [
      `Subject: [Critical] ${alertText(SAMPLE)}`,
      'From: falco@rae-test.localhost',
      'To: sec@rae-test.localhost, oncall@rae-test.localhost',
      'Date: Fri Jun 06 11:18:41 +0000 2025',
      'MIME-version: 1.0',
      'Content-Type: multipart/alternative; boundary=4t74weu9byeSdJTM',
    ])
      assert.ok(mail.headers.includes(h), `header ${h} in\n${mail.headers.join('\n')}`);
    // The body exim stored is the one falcosidekick builds, byte for byte (CRLF back to LF).
    const sent = smtpMessage(SAMPLE, 'falco@rae-test.localhost', 'sec@rae-test.localhost, oncall@rae-test.localhost', true);
    assert.is(mail.body.trimEnd(), sent.slice(sent.indexOf('\n\n') + 2).trimEnd());
    assert.ok(mail.body.startsWith('\n--4t74weu9byeSdJTM\nContent-Type: text/plain; charset="UTF-8"\n\nPriority: Critical\nOutput: '));
    assert.ok(mail.body.includes('\nTags: container mitre_execution shell \nTime: 2025-06-06 11:18:41.38257 +0000 UTC\n\n--Fields--\ncontainer.id: abc123\n'));
    assert.ok(mail.body.includes('--4t74weu9byeSdJTM\nContent-Type: text/html; charset="UTF-8";\n\n'));
    assert.ok(mail.body.includes('<td style="background-color:#ff9000; width:700px; text-align:center;"><span style="font-size:12px; color:#fff;"><strong>Critical</strong></span></td>'));
    assert.ok(mail.body.includes('container &lt;tty&gt; &amp; \\&#34;quoted\\&#34; (user=root container=abc123)</td>'));
    assert.ok(mail.body.includes('<td style="background-color:#d1d6da">2025-06-06 11:18:41.38257 &#43;0000 UTC</td>'));
    assert.ok(mail.body.trimEnd().endsWith('</table>\n\n--4t74weu9byeSdJTM--'));
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test('outputformat text: a single text/plain body, no multipart', async () => {
  const server = await startExim();
  let t: Awaited<ReturnType<typeof startWithOutput>> | undefined;
  try {
    const fwd = (t = await startWithOutput('smtp', settings(server, { outputformat: 'text', to: 'sec@rae-test.localhost' })));
    fwd.fwd.submit({ ...SAMPLE, priority: 'Warning' });
    await waitFor(() => mbox(readServerFile(server, 'mail', 'mbox')).length === 1, `the mail (exim: ${server.output()})`);
    const [mail] = mbox(readServerFile(server, 'mail', 'mbox')) as [{ headers: string[]; body: string }];
    assert.ok(mail.headers.some((h) => h.startsWith('Subject: [Warning] ')));
    assert.ok(mail.headers.includes('Content-Type: text/plain; charset="UTF-8"'), mail.headers.join('\n'));
    assert.ok(mail.body.startsWith('Priority: Warning\nOutput: '));
    assert.not.ok(mail.body.includes('4t74weu9byeSdJTM'));
  } finally {
    await t?.fwd.close();
    await server.dispose();
  }
});

test.run();
