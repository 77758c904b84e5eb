// Configuration overrides: RAE_<SECTION>_<KEY> environment variables and `-o key=value`, typed by
// the key's default; an unknown key or a wrong type is a problem naming the key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../host/config/config.js';

const env = { RAE_STATE_DIR: '/tmp/rae-state' };

test('config: -o sets numbers, booleans, strings and lists by dotted key', () => {
  const { config, problems } = loadConfig(undefined, undefined, ['forwarder.port=2802', 'api.enabled=false', 'logLevel=debug', 'rules.builtIn=[syscall, orchestrator-audit]', 'hostname=node-1'], env);
  assert.equal(problems, []);
  assert.is(config.forwarder.port, 2802);
  assert.is(config.api.enabled, false);
  assert.is(config.logLevel, 'debug');
  assert.equal(config.rules.builtIn, ['syscall', 'orchestrator-audit']);
  assert.is(config.hostname, 'node-1');
});

test('config: a list key given again with -o appends; the first replaces', () => {
  const { config } = loadConfig(undefined, undefined, ['rules.files=a.yaml', 'rules.files=b.yaml'], env);
  assert.equal(config.rules.files, ['a.yaml', 'b.yaml']);
});

test('config: -o with an unknown key, a section, a wrong type or no = is a problem naming it', () => {
  const { problems } = loadConfig(undefined, undefined, ['nope.x=1', 'forwarder=1', 'forwarder.port=80a', 'api.enabled=maybe', 'forwarder.port'], env);
  assert.equal(
    problems.map((p) => p.key),
    ['nope.x (-o)', 'forwarder (-o)', 'forwarder.port (-o)', 'api.enabled (-o)', 'forwarder.port'],
  );
  assert.match(problems[2]!.message, "expected a number, not '80a'");
  assert.match(problems[3]!.message, 'expected true or false');
});

test('config: -o as Falco: nested maps created under free-form mappings, values typed as YAML scalars', () => {
  const { config, problems } = loadConfig(
    undefined,
    undefined,
    [
      'forwarder.outputs.slack.webhookurl=https://hooks.example/x',
      'forwarder.outputs.slack.minimumpriority=warning',
      'forwarder.customfields.env=prod',
      'forwarder.outputs.webhook.customheaders.X-Trace=on',
      'forwarder.outputs.loki.extralabels[]=rule',
      'forwarder.outputs.loki.extralabels[]=priority',
      'forwarder.outputs.loki.hostport=http://127.0.0.1:3100',
      'forwarder.outputs.webhook.address=http://127.0.0.1:1/',
      'forwarder.outputs.webhook.retries=5',
    ],
    env,
  );
  assert.equal(problems, []);
  assert.equal(config.forwarder.outputs.slack, { webhookurl: 'https://hooks.example/x', minimumpriority: 'warning' });
  assert.equal(config.forwarder.customfields, { env: 'prod' });
  assert.equal(config.forwarder.outputs.loki, { extralabels: ['rule', 'priority'], hostport: 'http://127.0.0.1:3100' });
  assert.equal(config.forwarder.outputs.webhook, { customheaders: { 'X-Trace': 'on' }, address: 'http://127.0.0.1:1/', retries: 5 });
});

test('config: -o key[]=value appends to a list, key[N]=value sets an element; yaml-cpp booleans', () => {
  const { config, problems } = loadConfig(
    undefined,
    undefined,
    ['rules.files[]=a.yaml', 'rules.files[]=b.yaml', 'rules.files[0]=c.yaml', 'rules.builtIn[]=syscall-incubating', 'api.enabled=no', 'rules.watch=Off', 'syscall.optional=yes'],
    env,
  );
  assert.equal(problems, []);
  assert.equal(config.rules.files, ['c.yaml', 'b.yaml']);
  assert.equal(config.rules.builtIn, ['syscall', 'orchestrator-audit', 'syscall-incubating']);
  assert.is(config.api.enabled, false);
  assert.is(config.rules.watch, false);
  assert.is(config.syscall.optional, true);
});

test('config: -o a {…} mapping sets a whole free-form mapping', () => {
  const { config, problems } = loadConfig(undefined, undefined, ['forwarder.outputs.file={filename: /tmp/x.json, minimumpriority: error}', 'forwarder.customfields={a: 1, b: two}'], env);
  assert.equal(problems, []);
  assert.equal(config.forwarder.outputs.file, { filename: '/tmp/x.json', minimumpriority: 'error' });
  assert.equal(config.forwarder.customfields, { a: 1, b: 'two' } as unknown as Record<string, string>); // typed by YAML; the consumer makes strings
});

test('config: -o with a wrong path or type is a problem naming the key and why', () => {
  const cases: Array<[string, string, string]> = [
    ['forwarder.port.x=1', 'forwarder.port.x (-o)', 'forwarder.port is a number, not a mapping'],
    ['forwarder.port[]=1', 'forwarder.port[] (-o)', 'forwarder.port is a number, not a list'],
    ['rules.files[5]=x.yaml', 'rules.files[5] (-o)', 'index 5 is past the end of the list (0 items; use [] to append)'],
    ['rules..files=x', 'rules..files (-o)', "'' is not a key"],
    ['forwarder.outputs=x', 'forwarder.outputs (-o)', 'is a mapping; set one of its keys (forwarder.outputs.KEY=VALUE) or give a {…} mapping'],
    ['forwarder.outputs.nosuch.x=1', 'forwarder.outputs.nosuch', 'unknown output'],
    ['forwarder.outputs.slack.minimumpriority=loud', 'forwarder.outputs.slack.minimumpriority', 'unknown priority "loud"'],
    ['forwarder.outputs.webhook.retries=many', 'forwarder.outputs.webhook.retries', 'expected a number'],
    ['forwarder.customfields.env.x=1', 'forwarder.customfields', 'env: expected a scalar value'],
  ];
  for (const [option, key, message] of cases) {
    const { problems } = loadConfig(undefined, undefined, [option], env);
    assert.ok(problems.length > 0, option);
    assert.is(problems[0]!.key, key, `${option}: ${JSON.stringify(problems)}`);
    assert.match(problems[0]!.message, message, option);
  }
});

test('config: RAE_<SECTION>_<KEY> environment variables override the file; -o overrides them', () => {
  const e = { ...env, RAE_FORWARDER_WEBHOOKURL: 'http://sidekick:2801/', RAE_FORWARDER_WEBHOOK_RETRIES: '7', RAE_WEBHOOK_PORT: '9000', RAE_UNRELATED: 'x' };
  const { config, problems } = loadConfig(undefined, undefined, ['webhook.port=9001'], e);
  assert.equal(problems, []);
  assert.is(config.forwarder.webhookUrl, 'http://sidekick:2801/');
  assert.is(config.forwarder.webhookRetries, 7);
  assert.is(config.webhook.port, 9001);
  assert.is(config.stateDir, '/tmp/rae-state');
});

test('config: an environment variable of the wrong type is a problem naming the variable', () => {
  const { problems } = loadConfig(undefined, undefined, [], { ...env, RAE_API_PORT: 'eighty' });
  assert.equal(
    problems.map((p) => p.key),
    ['api.port (environment RAE_API_PORT)'],
  );
});

test.run();
