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
  const { problems } = loadConfig(undefined, undefined, ['nope.x=1', 'forwarder=1', 'forwarder.port=80a', 'api.enabled=yes', 'forwarder.port'], env);
  assert.equal(
    problems.map((p) => p.key),
    ['nope.x (-o)', 'forwarder (-o)', 'forwarder.port (-o)', 'api.enabled (-o)', 'forwarder.port'],
  );
  assert.match(problems[2]!.message, "expected a number, not '80a'");
  assert.match(problems[3]!.message, 'expected true or false');
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
