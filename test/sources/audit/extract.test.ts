// Audit extraction semantics on small hand-written events: the auditID gate, text of non-string
// values, list and index rules, image repositories with registry ports, JSON pointers with
// RFC 6901 escapes, query parameters as Go decodes them, RFC 3339 times, Go's indentation.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditEventTimeNs, extractAuditField, type AuditEvent } from '../../../host/sources/audit/extract.js';
import { goIndent, jsonPointer } from '../../../host/sources/audit/json-value.js';
import { imageRepository } from '../../../host/sources/audit/pod-fields.js';
import { parseRfc3339Nano, parseRfc3339NanoBytes } from '../../../host/sources/audit/time.js';
import { uriParam } from '../../../host/sources/audit/uri-param.js';

const ev = (json: unknown): AuditEvent => ({ json });
const pod = (spec: unknown, extra: Record<string, unknown> = {}) => ev({ auditID: 'a', requestObject: { spec }, ...extra });

test('every ka.* field needs an auditID key (any value); json fields do not', () => {
  const noId = ev({ verb: 'get', stage: 'ResponseComplete' });
  assert.is(extractAuditField(noId, 'ka.verb', undefined), undefined);
  assert.is(extractAuditField(noId, 'jevt.value', '/verb'), 'get');
  assert.is(extractAuditField(ev({ auditID: null, verb: 'get' }), 'ka.verb', undefined), 'get');
  assert.is(extractAuditField(ev([1, 2]), 'ka.verb', undefined), undefined);
  assert.is(extractAuditField(ev('text'), 'jevt.value', '/x'), undefined);
});

test('non-string values become JSON text; JSON null is the text null', () => {
  const e = ev({ auditID: 'a', responseStatus: { code: 403 }, requestObject: { spec: { hostNetwork: false, type: null }, data: { a: [1, { b: 'c' }] } } });
  assert.is(extractAuditField(e, 'ka.response.code', undefined), '403');
  assert.is(extractAuditField(e, 'ka.req.pod.host_network', undefined), 'false');
  assert.is(extractAuditField(e, 'ka.req.service.type', undefined), 'null');
  assert.is(extractAuditField(e, 'ka.req.configmap.obj', undefined), '{"a":[1,{"b":"c"}]}');
});

test('list fields: wrong types and empty lists are missing', () => {
  assert.is(extractAuditField(ev({ auditID: 'a', user: { groups: 'x' } }), 'ka.user.groups', undefined), undefined);
  assert.is(extractAuditField(ev({ auditID: 'a', user: { groups: [] } }), 'ka.user.groups', undefined), undefined);
  assert.equal(extractAuditField(ev({ auditID: 'a', user: { groups: ['g', 7] } }), 'ka.user.groups', undefined), ['g', '7']);
});

test('container list fields: privileged skips containers without it, [N] selects one container', () => {
  const p = pod({ containers: [{ image: 'a' }, { image: 'b', securityContext: { privileged: true } }, { image: 'c', securityContext: { privileged: false } }] });
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.privileged', undefined), ['true', 'false']);
  assert.is(extractAuditField(p, 'ka.req.pod.containers.privileged', '0'), undefined);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.privileged', '1'), ['true']);
  assert.is(extractAuditField(p, 'ka.req.pod.containers.image', '3'), undefined);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.image', '2'), ['c']);
  assert.is(extractAuditField(pod({}), 'ka.req.pod.containers.image', undefined), undefined);
  // A container without an image makes the image list unavailable, as in the plugin.
  assert.is(extractAuditField(pod({ containers: [{ image: 'a' }, { name: 'x' }] }), 'ka.req.pod.containers.image', undefined), undefined);
});

test('effective run-as ids: container, else pod security context, else 0', () => {
  const p = pod({ securityContext: { runAsUser: 1000 }, containers: [{ securityContext: { runAsUser: 0 } }, {}] });
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.eff_run_as_user', undefined), ['0', '1000']);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.eff_run_as_group', undefined), ['0', '0']);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.run_as_user', undefined), ['0']);
  assert.is(extractAuditField(p, 'ka.req.pod.run_as_user', undefined), '1000');
});

test('capabilities, commands, args are flattened; host ports fall back to containerPort', () => {
  const p = pod({
    containers: [{ command: ['sh', '-c'], args: ['x'], securityContext: { capabilities: { add: ['NET_ADMIN', 'SYS_TIME'] } }, ports: [{ containerPort: 80 }, { containerPort: 443, hostPort: 8443 }] }, { command: ['nginx'] }],
  });
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.add_capabilities', undefined), ['NET_ADMIN', 'SYS_TIME']);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.command', undefined), ['sh', '-c', 'nginx']);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.args', undefined), ['x']);
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.host_port', undefined), ['80', '8443']);
  assert.is(extractAuditField(p, 'ka.req.pod.containers.host_port', '1'), undefined);
});

test('image repositories keep registry ports and drop tags and digests', () => {
  const cases: Array<[string, string]> = [
    ['nginx', 'nginx'],
    ['nginx:1.25', 'nginx'],
    ['docker.io/falcosecurity/falco:0.38.0', 'docker.io/falcosecurity/falco'],
    ['registry.local:5000/team/app:1.0', 'registry.local:5000/team/app'],
    ['registry.local:5000/team/app', 'registry.local:5000/team/app'],
    ['registry.local:5000/app@sha256:abcd', 'registry.local:5000/app'],
    ['app:v1@sha256:abcd', 'app'],
    ['[::1]:5000/app:v2', '[::1]:5000/app'],
  ];
  for (const [image, repo] of cases) assert.is(imageRepository(image), repo, image);
  const p = pod({ containers: [{ image: 'registry.local:5000/team/app:1.0' }] });
  assert.equal(extractAuditField(p, 'ka.req.pod.containers.image.repository', undefined), ['registry.local:5000/team/app']);
  assert.is(extractAuditField(p, 'ka.req.container.image.repository', undefined), 'registry.local:5000/team/app');
});

test('binding subjects by kind', () => {
  const e = ev({
    auditID: 'a',
    requestObject: {
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
        { kind: 'Group', name: 'devs' },
      ],
    },
  });
  assert.equal(extractAuditField(e, 'ka.req.binding.subjects.user_names', undefined), ['alice']);
  assert.equal(extractAuditField(e, 'ka.req.binding.subjects.serviceaccount_names', undefined), ['sa']);
  assert.equal(extractAuditField(e, 'ka.req.binding.subjects.serviceaccount_ns_names', undefined), ['ns:sa']);
  assert.equal(extractAuditField(e, 'ka.req.binding.subjects.group_names', undefined), ['devs']);
  assert.is(extractAuditField(e, 'ka.req.binding.subject.has_name', 'alice'), 'true');
});

test('volumes: flexVolume drivers and volume types', () => {
  const p = pod({
    volumes: [
      { name: 'a', flexVolume: { driver: 'd1' } },
      { name: 'b', emptyDir: {} },
    ],
  });
  assert.equal(extractAuditField(p, 'ka.req.pod.volumes.flexvolume_driver', undefined), ['d1']);
  assert.equal(extractAuditField(p, 'ka.req.pod.volumes.volume_type', undefined), ['flexVolume', 'emptyDir']);
  assert.is(extractAuditField(p, 'ka.req.pod.volumes.hostpath', undefined), undefined);
});

test('annotation fields and the cluster name', () => {
  const e = ev({
    auditID: 'a',
    annotations: { 'pod-security.kubernetes.io/audit-violations': 'would violate', 'validation.policy.admission.k8s.io/validation_failure': '[]' },
  });
  assert.is(extractAuditField(e, 'ka.security.pod.violations', undefined), 'would violate');
  assert.is(extractAuditField(e, 'ka.validations.admission.policy.failure', undefined), '[]');
  assert.is(extractAuditField(e, 'ka.cluster.name', undefined), undefined);
  assert.is(extractAuditField(e, 'ka.no.such.field', undefined), undefined);
});

test('JSON pointers: RFC 6901 unescaping, array indexes, misses', () => {
  const doc = { 'a/b': 1, 'm~n': 'tilde', arr: [10, { k: 'v' }], '': 'empty key', e: {} };
  assert.is(jsonPointer(doc, '/a~1b'), 1);
  assert.is(jsonPointer(doc, '/m~0n'), 'tilde');
  assert.is(jsonPointer(doc, '/arr/1/k'), 'v');
  assert.is(jsonPointer(doc, 'arr/0'), 10);
  assert.is(jsonPointer(doc, '/'), 'empty key');
  assert.is(jsonPointer(doc, '/arr/2'), undefined);
  assert.is(jsonPointer(doc, '/arr/-1'), undefined);
  assert.is(jsonPointer(doc, '/arr/x'), undefined);
  assert.is(jsonPointer(doc, ''), undefined);
  assert.is(extractAuditField(ev(doc), 'jevt.value', '/e'), '{}');
  assert.is(extractAuditField(ev(doc), 'jevt.value', '/arr'), '[10,{"k":"v"}]');
  assert.is(extractAuditField(ev(doc), 'jevt.value', ''), undefined);
});

test('query parameters decode like Go url.ParseQuery', () => {
  assert.is(uriParam('/x?command=ls+-la&command=second', 'command'), 'ls -la');
  assert.is(uriParam('/x?command=%2Fbin%2Fsh', 'command'), '/bin/sh');
  assert.is(uriParam('/x?a=1&b=2#frag&c=3', 'c'), undefined);
  assert.is(uriParam('/x?flag', 'flag'), '');
  assert.is(uriParam('/x?a=%zz&command=sh', 'command'), undefined);
  assert.is(uriParam('/x?a;b=1&command=sh', 'command'), undefined);
  assert.is(uriParam('/x', 'command'), undefined);
});

test('query parameters without escapes are read in place as the decoding reads them', () => {
  // A query without %, + or ; is read pair by pair in place: each case is checked against the
  // same query with a %-escaped letter added in a pair of its own, which goes through the decoding.
  const cases: Array<[string, string, string | undefined]> = [
    ['/api/v1/namespaces/default/pods/p/exec?command=bash&container=c&stdin=true', 'command', 'bash'],
    ['/x?command=sh&command=-c&command=id', 'command', 'sh'],
    ['/x?commandx=1&command=2', 'command', '2'],
    ['/x?xcommand=1&command=2', 'command', '2'],
    ['/x?a=1&&command&command=2', 'command', ''],
    ['/x?command=a=b&c', 'command', 'a=b'],
    ['/x?a=1&b=2#frag&command=3', 'command', undefined],
    ['/x?a=1#command=3', 'command', undefined],
    ['/x#?command=3', 'command', '3'],
    ['/x?', 'command', undefined],
    ['/x?=v&command=', 'command', ''],
    ['/x?=v', '', 'v'],
    ['/x?&=v', '', 'v'],
    ['/x?command=caf\u00e9&b', 'command', 'caf\u00e9'],
    ['/x?b&command', 'command', ''],
    ['/x?a=1&comm', 'command', undefined],
  ];
  for (const [uri, key, want] of cases) {
    assert.is(uriParam(uri, key), want, uri);
    const hash = uri.indexOf('#');
    const escaped = hash < 0 ? `${uri}&z=%7a` : `${uri.slice(0, hash)}&z=%7a${uri.slice(hash)}`;
    if (uri.includes('?') && !uri.includes('#?')) assert.is(uriParam(escaped, key), want, `${escaped} (decoded)`);
  }
  // A ; anywhere, or a bad escape after the pair that was found, still makes the query malformed.
  assert.is(uriParam('/x?command=sh&a;b=1', 'command'), undefined);
  assert.is(uriParam('/x?command=sh&a=%z', 'command'), undefined);
});

test('RFC 3339 times as Go parses them', () => {
  assert.is(parseRfc3339Nano('1970-01-01T00:00:00Z'), 0n);
  assert.is(parseRfc3339Nano('2023-01-01T00:00:01.000000Z'), 1672531201000000000n);
  assert.is(parseRfc3339Nano('2023-01-01T02:00:01.5+02:00'), 1672531201500000000n);
  assert.is(parseRfc3339Nano('2024-02-29T12:00:00.1234567891Z'), 1709208000123456789n);
  assert.is(parseRfc3339Nano('1900-03-01T00:00:00Z'), -2203891200000000000n);
  for (const bad of ['2023-02-29T00:00:00Z', '2023-01-01 00:00:00Z', '2023-01-01T24:00:00Z', '2023-01-01T00:00:00', '2023-13-01T00:00:00Z', '']) {
    assert.is(parseRfc3339Nano(bad), undefined, bad);
  }
  assert.is(auditEventTimeNs(ev({ stageTimestamp: 12 })), undefined);
});

test('RFC 3339 times read from bytes: only the bytes of the range count, whatever follows it', () => {
  const at = (text: string, from: number, to: number) => parseRfc3339NanoBytes(Buffer.from(text), from, to);
  const t = '"2023-01-01T00:00:01.5Z"';
  assert.is(at(t, 1, t.length - 1), 1672531201500000000n);
  assert.is(at(t, 1, t.length - 2), undefined, 'the Z after the range');
  assert.is(at(t, 1, t.length - 3), undefined, 'a fraction cut from its zone');
  assert.is(at('x2023-01-01T00:00:01+01:00', 1, 23), undefined, 'an offset cut');
  assert.is(at('x2023-01-01T00:00:01+01:00', 1, 26), 1672527601000000000n);
  assert.is(at('2023-01-01T00:00:0', 0, 18), undefined, 'too short');
});

test('RFC 3339 times equal Date.UTC with the fraction cut to nine digits and the offset applied (property)', () => {
  const two = (n: number) => String(n).padStart(2, '0');
  fc.assert(
    fc.property(
      fc.date({ min: new Date(Date.UTC(100, 0, 1)), max: new Date(Date.UTC(9998, 11, 31, 23, 59, 59)), noInvalidDate: true }),
      fc.string({ unit: fc.constantFrom('0', '1', '4', '5', '9'), maxLength: 12 }),
      fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
      fc.boolean(),
      (date, fraction, offsetMin, zulu) => {
        const d = new Date(Math.floor(date.getTime() / 1000) * 1000);
        const local = new Date(d.getTime() + (zulu ? 0 : offsetMin) * 60_000);
        const wall = `${String(local.getUTCFullYear()).padStart(4, '0')}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())}T${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`;
        const zone = zulu ? 'Z' : `${offsetMin < 0 ? '-' : '+'}${two(Math.floor(Math.abs(offsetMin) / 60))}:${two(Math.abs(offsetMin) % 60)}`;
        const text = `${wall}${fraction === '' ? '' : `.${fraction}`}${zone}`;
        const expected = BigInt(d.getTime() / 1000) * 1_000_000_000n + BigInt(fraction.slice(0, 9).padEnd(9, '0'));
        assert.is(parseRfc3339Nano(text), expected, text);
      },
    ),
    { numRuns: 2000 },
  );
  for (const bad of [
    '2023-01-01T00:00:00.Z',
    '2023-01-01T00:00:00+01:00x',
    '2023-01-01T00:00:00+0100',
    '2023-01-01T00:00:00z',
    '2023-01-01T00:00:60Z',
    '2023-01-01T00:00:00+24:00',
    '2023-01-01T00:00:00+01:60',
    '2023-1-01T00:00:00Z',
    '２023-01-01T00:00:00Z',
  ]) {
    assert.is(parseRfc3339Nano(bad), undefined, bad);
  }
});

test('Go json.Indent layout', () => {
  assert.is(goIndent('{"a":[],"b":{},"c":[1,{"d":"x, y: {z}"}],"e":"q\\"}"}'), '{\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    {\n      "d": "x, y: {z}"\n    }\n  ],\n  "e": "q\\"}"\n}');
  assert.is(goIndent(' [ 1 , 2 ] '), '[\n  1,\n  2\n]');
  assert.is(goIndent('{"n":1.50e3}'), '{\n  "n": 1.50e3\n}');
});

test.run();
