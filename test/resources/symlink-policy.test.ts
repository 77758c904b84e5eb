// Issue 19, item 4, end to end: a link in the resources directory to a 0600 file outside it (a
// copy of /etc/shadow) used to be followed, and its lines came out in the YAML error on stderr
// and in the internal alert on stdout. Now it is refused unread, reported by the link's name
// only; the ConfigMap layout (top-level links through `..data`, a timestamped directory
// swapped atomically) is still followed and its swap goes live.
import { chmodSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditPoster, webhookClient } from '../../host/generator/index.js';
import { auditEvent } from '../../host/generator/audit-events.js';
import { RESOURCE_REJECTED_RULE } from '../../host/resources/index.js';
import { startRae } from '../helpers/rae-run.js';
import { canaryRules, moduleConfig } from '../helpers/resources.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A shadow line, as in the reported case. */
const SHADOW = 'root:$6$secretsalt$Xk9vQ2hP0aL7mN3bR5tY8uW1zC4dE6fG:19700:0:99999:7:::\n';

/** Every 8-character piece of the secret's line found in `text`. */
function leaked(text: string): string[] {
  const line = SHADOW.trim();
  const out: string[] = [];
  for (let i = 0; i + 8 <= line.length; i++) if (text.includes(line.slice(i, i + 8))) out.push(line.slice(i, i + 8));
  return out;
}

test('rae run: a link out of the resources directory is refused without its content; a ConfigMap ..data swap goes live', async () => {
  const root = tempDir('rae-links-');
  const state = join(root, 'state');
  const resources = join(root, 'resources');
  mkdirSync(resources);
  const secret = join(root, 'shadow');
  writeFileSync(secret, SHADOW);
  chmodSync(secret, 0o600);
  writeFileSync(join(resources, 'module.yaml'), moduleConfig());
  // The kubelet's ConfigMap layout (atomic_writer.go).
  const version = (stamp: string, text: string) => {
    mkdirSync(join(resources, stamp));
    writeFileSync(join(resources, stamp, 'canary.yaml'), text);
    symlinkSync(stamp, join(resources, '..data_tmp'));
    renameSync(join(resources, '..data_tmp'), join(resources, '..data'));
  };
  version('..2024_11_25_00_00_00.000000001', canaryRules('Canary v1'));
  symlinkSync('..data/canary.yaml', join(resources, 'canary.yaml'));
  const leak = join(resources, 'leak.yaml');
  symlinkSync(secret, leak);
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'hostname: n1\nrules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\n');
  const rae = startRae(['--config', cfg, '--state-dir', state, '--resources', resources]);
  try {
    const [, url] = await rae.waitLog(/run: webhook listening on (\S+)/);
    await rae.waitLog(/run: ready/);
    await rae.waitAlerts((as) => as.some((a) => a.rule === RESOURCE_REJECTED_RULE), 'the rejection alert');
    const rejection = rae.alerts.find((a) => a.rule === RESOURCE_REJECTED_RULE)!;
    assert.is(rejection.output_fields['resource.file'], `${leak}:1:1`);
    assert.is(rejection.output_fields['resource.error'], `${leak}:1:1: not read: it is a link to a file outside the resources directory (links may only point inside it)`);
    assert.match(rae.stderr(), `${leak}:1:1: error LOAD_ERR_FILE_READ (File read error): not read: it is a link to a file outside the resources directory`);

    const post = auditPoster(url!, webhookClient(join(state, 'webhook-tls')));
    const read = () => post([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'rae-canary' })]);
    await read();
    await rae.waitAlerts((as) => as.some((a) => a.rule === 'Canary v1'), 'the v1 canary alert');

    // The kubelet's update: a new timestamped directory, ..data swapped to it, the old one removed.
    const mark = rae.stderr().length;
    version('..2024_11_25_00_01_00.000000002', canaryRules('Canary v2'));
    rmSync(join(resources, '..2024_11_25_00_00_00.000000001'), { recursive: true });
    await rae.waitLog(/resources: ruleset loaded .*EngineAuditRules: canary/, mark);
    await read();
    await rae.waitAlerts((as) => as.some((a) => a.rule === 'Canary v2'), 'the v2 canary alert');
  } finally {
    assert.is(await rae.stop(), 0, rae.stderr());
  }
  assert.equal(leaked(rae.stderr()), [], 'stderr quotes the secret');
  assert.equal(leaked(rae.stdoutLines().join('\n')), [], 'stdout quotes the secret');
});

test.run();
