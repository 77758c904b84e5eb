// The exact bytes falcosidekick's outputs carry for one alert, written out by hand from its Go
// source (types.FalcoPayload through encoding/json, the Alertmanager and Loki payloads, the
// syslog frame, the CEF line, the SMTP text part): the protocol tests check transport, these
// check the format.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { localClock } from '../../../host/output/time.js';
import { goRfc3339Nano, goTimeString, sidekickJson } from '../../../host/output/destinations/sidekick-payload.js';
import { alertmanagerBody, parseDropThresholds, safeLabel, type AlertmanagerShape } from '../../../host/output/destinations/alertmanager.js';
import { lokiBody } from '../../../host/output/destinations/loki.js';
import { natsSubject } from '../../../host/output/destinations/nats.js';
import { cefLine, localRfc3339, syslogFrame } from '../../../host/output/destinations/syslog.js';
import { htmlEscape, smtpDate, smtpText } from '../../../host/output/destinations/smtp-message.js';
import { SAMPLE } from './sample.js';

const clock = localClock(SAMPLE.timeNs);
/** SAMPLE's `output` as Go's encoding/json writes it (HTML-safe escapes). */
const OUTPUT_JSON = `"${clock}: Critical A shell was spawned in a container \\u003ctty\\u003e \\u0026 \\\\\\"quoted\\\\\\" (user=root container=abc123)"`;
const FIELDS_JSON = '{"container.id":"abc123","evt.time":1749208721382570000,"k8s.ns.name":"prod","proc.name":"bash","proc.pid":4242,"proc.tty":true,"user.name":"root"}';

test('falcosidekick payload JSON: field order of types.FalcoPayload, sorted map keys, HTML-safe escapes, trimmed fraction', () => {
  assert.is(
    sidekickJson(SAMPLE, 'a1b2'),
    `{"uuid":"a1b2","output":${OUTPUT_JSON},"priority":"Critical","rule":"Terminal shell in container (A\\u0026B)","time":"2025-06-06T11:18:41.38257Z",` +
      `"output_fields":${FIELDS_JSON},"source":"syscall","tags":["container","mitre_execution","shell"],"hostname":"node-1"}`,
  );
  assert.is(sidekickJson({ ...SAMPLE, tags: [], hostname: '' }, 'x').endsWith(`"source":"syscall"}`), true, 'tags and hostname are omitempty');
  assert.is(goRfc3339Nano(1_749_208_721_000_000_000n), '2025-06-06T11:18:41Z');
  assert.is(goTimeString(SAMPLE.timeNs), '2025-06-06 11:18:41.38257 +0000 UTC');
});

const SHAPE: AlertmanagerShape = {
  expiresAfterS: 0,
  extraLabels: {},
  extraAnnotations: {},
  severityMap: {},
  dropDefault: 'Critical',
  dropThresholds: parseDropThresholds('10000:critical, 1000:critical, 100:critical, 10:warning, 1:warning') as never,
};

test('Alertmanager body: label-safe field names, falcosidekick labels, severity, annotations, zero endsAt', () => {
  const output = OUTPUT_JSON;
  assert.is(
    alertmanagerBody(SAMPLE, SHAPE),
    '[{"labels":{"container_id":"abc123","eventsource":"syscall","evt_time":"1749208721382570000","hostname":"node-1","k8s_ns_name":"prod","priority":"Critical",' +
      '"proc_name":"bash","proc_pid":"4242","rule":"Terminal shell in container (A\\u0026B)","severity":"critical","source":"falco","tags":"container,mitre_execution,shell","user_name":"root"},' +
      `"annotations":{"description":${output},"info":${output},"summary":"Terminal shell in container (A\\u0026B)"},"endsAt":"0001-01-01T00:00:00Z"}]`,
  );
  const custom = JSON.parse(alertmanagerBody({ ...SAMPLE, priority: 'Notice' }, { ...SHAPE, expiresAfterS: 90, severityMap: { Notice: 'page' }, extraLabels: { team: 'sec' }, extraAnnotations: { runbook: 'r1' } }));
  assert.is(custom[0].labels.severity, 'page');
  assert.is(custom[0].labels.team, 'sec');
  assert.is(custom[0].annotations.runbook, 'r1');
  assert.is(custom[0].endsAt, '2025-06-06T11:20:11.38257Z');
  for (const [p, sev] of [
    ['Debug', 'information'],
    ['Informational', 'information'],
    ['Notice', 'information'],
    ['Warning', 'warning'],
    ['Error', 'warning'],
    ['Critical', 'critical'],
    ['Alert', 'critical'],
    ['Emergency', 'critical'],
  ] as const)
    assert.is(JSON.parse(alertmanagerBody({ ...SAMPLE, priority: p }, SHAPE))[0].labels.severity, sev, p);
  assert.equal([safeLabel('k8s.pod.labels[app]'), safeLabel('..a..b..'), safeLabel('proc.aname[2]')], ['k8s_pod_labels_app', 'a_b', 'proc_aname_2']);
});

test('Alertmanager syscall-drop fields: n_evts skipped, n_drop counts bucketed by the thresholds and the priority raised', () => {
  const drop = (n: string, priority: 'Debug' | 'Critical' = 'Debug') => JSON.parse(alertmanagerBody({ ...SAMPLE, priority, outputFields: { n_evts: '5000', n_drops: n } }, SHAPE))[0].labels;
  assert.equal([drop('0').n_drops, drop('0').priority], ['0', 'Warning']);
  assert.equal([drop('5').n_drops, drop('5').priority], ['>1', 'Warning']);
  assert.equal([drop('150').n_drops, drop('150').severity], ['>100', 'critical']);
  assert.equal([drop('20000').n_drops, drop('20000').priority], ['>10000', 'Critical']);
  assert.is(drop('5').n_evts, undefined);
  assert.is(parseDropThresholds('10:nope'), '"10:nope" is not <count>:<priority>');
});

test('Loki push body: stream labels as falcosidekick sets them, one [ns, line] value', () => {
  const shape = { labelFields: ['k8s.ns.name', 'proc.pid', 'container.id'], format: 'text' as const };
  assert.is(
    lokiBody(SAMPLE, shape, 'u'),
    '{"streams":[{"stream":{"container_id":"abc123","hostname":"node-1","k8s_ns_name":"prod","priority":"Critical","rule":"Terminal shell in container (A\\u0026B)","source":"syscall","tags":"container,mitre_execution,shell"},' +
      `"values":[["1749208721382570000",${OUTPUT_JSON}]]}]}`,
  );
  const json = JSON.parse(lokiBody(SAMPLE, { labelFields: [], format: 'json' }, 'u9'));
  assert.equal(JSON.parse(json.streams[0].values[0][1]), JSON.parse(sidekickJson(SAMPLE, 'u9')));
});

test('NATS subjects: priority lower-cased, rule slugged, custom templates', () => {
  assert.is(natsSubject('', SAMPLE), 'falco.critical.terminal_shell_in_container_a_b');
  assert.is(natsSubject('sec.<rule>.<priority>', { ...SAMPLE, rule: '--Write below /etc!' }), 'sec.write_below_etc.critical');
});

test('syslog frame as Go log/syslog writes it; CEF line as falcosidekick builds it', () => {
  const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));
  assert.is(syslogFrame('Critical', 'node-1', '{"a":1}', now, 77), `<2>${localRfc3339(now)} node-1 falco[77]: {"a":1}\n`);
  assert.is(syslogFrame('Debug', 'h', 'x\n', now, 1), `<7>${localRfc3339(now)} h falco[1]: x\n`);
  assert.match(localRfc3339(now), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:05(Z|[+-]\d{2}:\d{2})$/);
  assert.is(
    cefLine(SAMPLE, 'u1'),
    `CEF:0|Falcosecurity|Falco|1.0|Falco Event|Terminal shell in container (A&B)|8|uuid=u1 start=2025-06-06T11:18:41Z msg=${clock}: Critical A shell was spawned in a container <tty> & \\"quoted\\" (user=root container=abc123) source=syscall hostname=node-1 ` +
      'outputfields=container.id:abc123 evt.time:1749208721382570000 k8s.ns.name:prod proc.name:bash proc.pid:4242 proc.tty:true user.name:root tags=container,mitre_execution,shell',
  );
  assert.is(cefLine({ ...SAMPLE, tags: [], outputFields: {} }, 'u').endsWith('outputfields=evt.time:1749208721382570000'), true, 'the trailing space is trimmed');
});

test('SMTP plain-text part, Date header and HTML escaping as Go renders them', () => {
  assert.is(
    smtpText(SAMPLE),
    `Priority: Critical\nOutput: ${clock}: Critical A shell was spawned in a container <tty> & \\"quoted\\" (user=root container=abc123)\nRule: Terminal shell in container (A&B)\n` +
      'Source: syscall\nHostname: node-1\nTags: container mitre_execution shell \nTime: 2025-06-06 11:18:41.38257 +0000 UTC\n\n--Fields--\n' +
      'container.id: abc123\nevt.time: 1749208721382570000\nk8s.ns.name: prod\nproc.name: bash\nproc.pid: 4242\nproc.tty: true\nuser.name: root\n\n\n',
  );
  assert.is(smtpDate(SAMPLE.timeNs), 'Fri Jun 06 11:18:41 +0000 2025');
  assert.is(htmlEscape(`<a href='x'>"1+1" & 2</a>`), '&lt;a href=&#39;x&#39;&gt;&#34;1&#43;1&#34; &amp; 2&lt;/a&gt;');
});

test.run();
