// fd.sip.name through `rae run` on the real kernel, resolved for real: a private DNS server on
// 127.0.0.1 (test/helpers/dns-server.ts) maps test names to loopback addresses, `rae run` is
// configured to ask it (dns.servers) with a one-second refresh, and bash connects to those
// addresses (a port this process listens on, on every loopback address). The rule on the name
// fires for the address the name resolves to, not for another one; after the server's answer
// changes, it follows the new address once a refresh has seen it (the test waits for that alert
// itself, connecting again until it comes, within a wide deadline). A rule on the address alone
// marks events the name rules must not have matched (alerts are told apart by fd.cport).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDnsServer, type DnsServer } from '../../helpers/dns-server.js';
import { startRae, type RaeRun } from '../../helpers/rae-run.js';
import { kernelGate } from './collector.js';

const gate = kernelGate('dns-live.test.ts');
const run_ = gate.run ? test : test.skip;
const root = mkdtempSync(join(tmpdir(), 'rae-dns-'));
let rae: RaeRun | undefined;
let dns: DnsServer | undefined;
let server: Server | undefined;
let port = 0;

type Alert = RaeRun['alerts'][number];

/** bash connects to host:port and closes; resolves when it has exited. */
function connect(host: string): Promise<number | null> {
  return new Promise((resolve) => spawn('/bin/bash', ['-c', `exec 3<>/dev/tcp/${host}/${port}`], { stdio: 'ignore' }).on('exit', (code) => resolve(code)));
}

/** Connects to `host` every half second until an alert satisfies `pred` (deadline `ms`); returns it. */
async function connectUntil(host: string, what: string, pred: (a: Alert) => boolean, ms = 90_000): Promise<Alert> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = rae!.alerts.find(pred);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no alert for ${what} within ${ms} ms (dns queries: ${dns!.queries})\n--- stderr:\n${rae!.stderr()}`);
    assert.is(await connect(host), 0, `bash connects to ${host}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const of = (rule: string, sip: string) => (a: Alert) => a.rule === rule && a.output_fields['fd.sip'] === sip;
const namedPorts = (rule: string) => new Set(rae!.alerts.filter((a) => a.rule === rule).map((a) => a.output_fields['fd.cport']));

run_('dns live: rae run resolves the rules names with the configured server', async () => {
  server = await new Promise<Server>((resolve, reject) => {
    const s = createServer((c) => c.destroy());
    s.once('error', reject);
    s.listen(0, '0.0.0.0', () => resolve(s));
  });
  port = (server.address() as { port: number }).port;
  dns = await startDnsServer({ 'svc.rae-test': ['127.0.0.2'], 'alt.rae-test': ['127.0.0.4'] });
  const out = 'output: name=%fd.sip.name sip=%fd.sip cport=%fd.cport';
  const rules = [
    ['by name', `fd.sip.name = "svc.rae-test"`],
    ['by name list', 'fd.sip.name in (alt.rae-test, none.rae-test)'],
    ['by address', 'fd.sip in (127.0.0.2, 127.0.0.3, 127.0.0.4)'],
  ]
    .map(([n, c]) => `- rule: ${n}\n  desc: d\n  condition: evt.type = connect and fd.sport = ${port} and ${c}\n  ${out}\n  priority: NOTICE\n`)
    .join('');
  writeFileSync(join(root, 'rules.yaml'), rules);
  writeFileSync(
    join(root, 'config.yaml'),
    [
      'rules:',
      '  builtIn: []',
      `  files: [${JSON.stringify(join(root, 'rules.yaml'))}]`,
      '  ruleMatching: all',
      'dns:',
      `  servers: ["127.0.0.1:${dns.port}"]`,
      '  refreshSeconds: 1',
      '  maxRefreshSeconds: 2',
      'containers:',
      '  enabled: false',
      'forwarder:',
      '  port: 0',
      'api:',
      '  enabled: false',
      'webhook:',
      '  enabled: false',
      '',
    ].join('\n'),
  );
  rae = startRae(['--config', join(root, 'config.yaml'), '--state-dir', join(root, 'state')]);
  await rae.waitLog(/run: ready/);
});

run_('dns live: fd.sip.name = name fires for the address the name resolves to, not for another', async () => {
  const hit = await connectUntil('127.0.0.2', 'by name on 127.0.0.2', of('by name', '127.0.0.2'));
  assert.is(hit.output_fields['fd.sip.name'], 'svc.rae-test');
  // 127.0.0.3: the address rule fires, the name rules do not (same event: same client port)
  const other = await connectUntil('127.0.0.3', 'by address on 127.0.0.3', of('by address', '127.0.0.3'));
  assert.is(other.output_fields['fd.sip.name'], null, 'no name for an address no name resolved to');
  assert.not.ok(namedPorts('by name').has(other.output_fields['fd.cport']));
  assert.not.ok(namedPorts('by name list').has(other.output_fields['fd.cport']));
});

run_('dns live: fd.sip.name in (list) fires for the address of a name in the list', async () => {
  const hit = await connectUntil('127.0.0.4', 'by name list on 127.0.0.4', of('by name list', '127.0.0.4'));
  assert.is(hit.output_fields['fd.sip.name'], 'alt.rae-test');
  assert.not.ok(namedPorts('by name').has(hit.output_fields['fd.cport']));
});

run_('dns live: a changed answer is followed after a refresh', async () => {
  dns!.table.set('svc.rae-test', ['127.0.0.3']);
  const moved = await connectUntil('127.0.0.3', 'by name on 127.0.0.3 after the change', of('by name', '127.0.0.3'));
  assert.is(moved.output_fields['fd.sip.name'], 'svc.rae-test');
  // the old address no longer has the name
  const old = await connectUntil('127.0.0.2', 'by address on 127.0.0.2 after the change', (a) => of('by address', '127.0.0.2')(a) && a.output_fields['fd.sip.name'] === null);
  assert.not.ok(namedPorts('by name').has(old.output_fields['fd.cport']));
});

test.after(async () => {
  await rae?.stop();
  await dns?.close();
  server?.close();
  rmSync(root, { recursive: true, force: true });
});

test.run();
