// falcosidekick's environment variables for the Alertmanager, Loki, NATS, MQTT, Redis, syslog and
// SMTP outputs (docs/outputs/<name>.md in falcosecurity/falcosidekick), each accepted, and one
// output configured from the environment alone against its real server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { createClient } from 'redis';
import { defaultConfig } from '../../../host/config/config.js';
import { startFanout } from '../../../host/output/fanout.js';
import { OUTPUTS, resolveOutputs } from '../../../host/output/destinations/table.js';
import { commonSettings, envName } from '../../../host/output/destinations/settings.js';
import { createMetrics } from '../../../host/metrics/index.js';
import { startRedis, waitFor } from '../../../support/real-servers.js';
import { SAMPLE } from './sample.js';

/** Each output's variables as falcosidekick documents them. */
const SIDEKICK_ENV: Record<string, string[]> = {
  alertmanager: ['HOSTPORT', 'ENDPOINT', 'EXPIRESAFTER', 'EXTRALABELS', 'EXTRAANNOTATIONS', 'CUSTOMSEVERITYMAP', 'DROPEVENTDEFAULTPRIORITY', 'DROPEVENTTHRESHOLDS', 'MINIMUMPRIORITY', 'CUSTOMHEADERS', 'CHECKCERT', 'MUTUALTLS'],
  loki: ['HOSTPORT', 'USER', 'APIKEY', 'TENANT', 'FORMAT', 'ENDPOINT', 'EXTRALABELS', 'CUSTOMHEADERS', 'MUTUALTLS', 'CHECKCERT', 'MINIMUMPRIORITY'],
  nats: ['HOSTPORT', 'SUBJECTTEMPLATE', 'MINIMUMPRIORITY'],
  mqtt: ['BROKER', 'TOPIC', 'QOS', 'RETAINED', 'USER', 'PASSWORD', 'CHECKCERT', 'MINIMUMPRIORITY'],
  redis: ['ADDRESS', 'DATABASE', 'STORAGETYPE', 'KEY', 'PASSWORD', 'MINIMUMPRIORITY'],
  syslog: ['HOST', 'PORT', 'PROTOCOL', 'FORMAT', 'MINIMUMPRIORITY'],
  smtp: ['HOSTPORT', 'TLS', 'AUTHMECHANISM', 'USER', 'PASSWORD', 'TOKEN', 'IDENTITY', 'TRACE', 'FROM', 'TO', 'OUTPUTFORMAT', 'MINIMUMPRIORITY'],
};

test('every falcosidekick variable of these outputs names one of their settings', () => {
  for (const [name, vars] of Object.entries(SIDEKICK_ENV)) {
    const row = OUTPUTS.find((r) => r.name === name);
    assert.ok(row, name);
    const specs = { ...commonSettings({ retries: 0, timeoutMs: 1, queueSize: 1 }), ...row.settings };
    const ours = Object.entries(specs).map(([k, spec]) => envName(row, k, spec));
    for (const v of vars) assert.ok(ours.includes(`${name.toUpperCase()}_${v}`), `${name.toUpperCase()}_${v} is accepted`);
  }
});

test('values from the environment override the file and are checked with the variable named', () => {
  const fc = defaultConfig({}).forwarder;
  fc.outputs = { nats: { hostport: 'nats://file:4222', subjecttemplate: 'from.file' } };
  const env = { NATS_HOSTPORT: 'nats://env:4222', MQTT_BROKER: 'tcp://m:1883', MQTT_QOS: '1', MQTT_RETAINED: 'true', SYSLOG_HOST: 'h', SYSLOG_PORT: '514', SYSLOG_PROTOCOL: 'udp', SMTP_HOSTPORT: 'h:25', SMTP_TO: 'a@b,c@d' };
  const { outputs, problems } = resolveOutputs(fc, env);
  assert.equal(problems, []);
  const get = (n: string) => outputs.find((o) => o.row.name === n)?.settings;
  assert.equal([get('nats')?.string('hostport'), get('nats')?.string('subjecttemplate')], ['nats://env:4222', 'from.file']);
  assert.equal([get('mqtt')?.number('qos'), get('mqtt')?.bool('retained'), get('mqtt')?.string('topic')], [1, true, 'falco/events']);
  assert.equal([get('syslog')?.string('protocol'), get('syslog')?.string('format')], ['udp', 'json']);
  assert.equal([get('smtp')?.string('to'), get('smtp')?.bool('tls'), get('smtp')?.string('outputformat')], ['a@b,c@d', true, 'html']);
  const bad = resolveOutputs(defaultConfig({}).forwarder, { REDIS_ADDRESS: 'r:6379', REDIS_STORAGETYPE: 'stream', MQTT_BROKER: 'tcp://m:1', MQTT_QOS: 'x' }).problems.map((p) => p.key);
  assert.equal(bad.sort(), ['forwarder.outputs.mqtt.qos (from MQTT_QOS)', 'forwarder.outputs.redis.storagetype'].sort());
});

test('the Redis output configured by REDIS_ADDRESS, REDIS_STORAGETYPE, REDIS_KEY, REDIS_DATABASE only', async () => {
  const server = await startRedis();
  const reader = createClient({ url: `redis://127.0.0.1:${server.port}`, database: 2 });
  const config = defaultConfig({});
  config.forwarder = { ...config.forwarder, enabled: false, stdout: false };
  const env = { REDIS_ADDRESS: `127.0.0.1:${server.port}`, REDIS_STORAGETYPE: 'hashmap', REDIS_KEY: 'from-env', REDIS_DATABASE: '2' };
  const fwd = await startFanout({ config: config.forwarder, metrics: createMetrics({ processMetrics: false }), log: () => {}, hostname: 'h', stdout: new PassThrough(), env });
  try {
    await reader.connect();
    fwd.submit(SAMPLE);
    await waitFor(async () => (await reader.hLen('from-env')) === 1, 'the alert in hash from-env of database 2');
    const [json] = Object.values(await reader.hGetAll('from-env')) as [string];
    assert.is(JSON.parse(json).rule, SAMPLE.rule);
  } finally {
    await fwd.close();
    reader.destroy();
    await server.dispose();
  }
});

test.run();
