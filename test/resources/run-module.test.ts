// `rae run` driven through its resources directory, as an operator does: disabled until a
// ModuleConfig enables it (the audit webhook then listens, and with controlPlaneManager its API
// server configuration is published); an EngineAuditRules dropped in takes effect without a
// restart; a bad one is rejected with an internal alert on stdout; removing the ModuleConfig
// stops the sources and withdraws the published configuration.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { auditPoster, webhookClient } from '../../host/generator/index.js';
import { auditEvent } from '../../host/generator/audit-events.js';
import { RESOURCE_REJECTED_RULE } from '../../host/resources/index.js';
import { startRae } from '../helpers/rae-run.js';
import { canaryRules, moduleConfig } from '../helpers/resources.js';
import { tempDir } from '../helpers/temp-dir.js';

test('rae run: module states, hot-loaded EngineAuditRules and rejections through the resources directory', async () => {
  const root = tempDir('rae-module-');
  const state = join(root, 'state');
  const resources = join(root, 'resources');
  mkdirSync(resources);
  writeFileSync(join(resources, 'module.yaml'), moduleConfig(false));
  const cfg = join(root, 'config.yaml');
  writeFileSync(cfg, 'hostname: n1\nrules:\n  builtIn: [orchestrator-audit]\nforwarder:\n  port: 0\napi:\n  enabled: false\nwebhook:\n  port: 0\nmodule:\n  controlPlaneManager: true\n');
  const published = join(state, 'audit-webhook-config.yaml');
  const rae = startRae(['--config', cfg, '--state-dir', state, '--resources', resources]);
  try {
    // 1. Disabled: ready, rules loaded, but no source runs.
    await rae.waitLog(/run: ready/);
    assert.match(rae.stderr(), 'module: disabled (built-in rule sets: orchestrator-audit; debugLogging: false)');
    assert.not.match(rae.stderr(), 'webhook listening');
    assert.not.ok(existsSync(published));

    // 2. Enabled: the webhook starts and its API server configuration is published.
    let mark = rae.stderr().length;
    writeFileSync(join(resources, 'module.yaml'), moduleConfig(true));
    const [, url] = await rae.waitLog(/run: webhook listening on (\S+)/, mark);
    await rae.waitLog(/module: source webhook started/, mark);
    const kubeconfig = parse(readFileSync(published, 'utf8')) as { clusters: Array<{ cluster: { server: string; 'certificate-authority-data': string } }> };
    assert.is(kubeconfig.clusters[0]!.cluster.server, url);
    const caPem = readFileSync(join(state, 'webhook-tls', 'ca.crt'), 'utf8');
    assert.is(Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8'), caPem);

    // 3. A new EngineAuditRules: its rule fires on the next audit event, no restart.
    mark = rae.stderr().length;
    writeFileSync(join(resources, 'canary.yaml'), canaryRules());
    await rae.waitLog(/EngineAuditRules: canary/, mark);
    const post = auditPoster(url!, webhookClient(join(state, 'webhook-tls')));
    await post([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'rae-canary' })]);
    await rae.waitAlerts((as) => as.some((a) => a.rule === 'Canary ConfigMap read'), 'the canary alert');

    // 4. A bad manifest: located error on stderr, internal alert on stdout, the canary still fires.
    writeFileSync(join(resources, 'bad.yaml'), canaryRules().replace('name: canary', 'name: bad').replace('priority: Critical', 'priority: Urgent'));
    await rae.waitAlerts((as) => as.some((a) => a.rule === RESOURCE_REJECTED_RULE), 'the rejection alert');
    const rejection = rae.alerts.find((a) => a.rule === RESOURCE_REJECTED_RULE)!;
    assert.is(rejection.source, 'internal');
    assert.is(rejection.output_fields['resource.name'], 'bad');
    assert.match(rae.stderr(), `${join(resources, 'bad.yaml')}:12:19: error LOAD_ERR_YAML_VALIDATE`);
    const before = rae.alerts.filter((a) => a.rule === 'Canary ConfigMap read').length;
    await post([auditEvent({ verb: 'get', resource: 'configmaps', namespace: 'default', name: 'rae-canary' })]);
    await rae.waitAlerts((as) => as.filter((a) => a.rule === 'Canary ConfigMap read').length > before, 'the canary alert after the rejection');

    // 5. No ModuleConfig: disabled again; the webhook stops and the published configuration goes.
    mark = rae.stderr().length;
    rmSync(join(resources, 'module.yaml'));
    await rae.waitLog(/module: source webhook stopped/, mark);
    assert.match(rae.stderr().slice(mark), 'module: disabled');
    assert.not.ok(existsSync(published));
    await post([]).then(
      () => assert.unreachable('the webhook still answers'),
      (err: Error) => assert.match(err.message, 'cannot POST'),
    );
  } finally {
    const code = await rae.stop();
    assert.is(code, 0, rae.stderr());
  }
});

test.run();
