// The alert line formats against real Falco output (reference/falco-language.md D.4 and the
// Deckhouse TEST_PLAN example in reference/module-and-forwarder.md §4), and parseAlertJson
// against falcosidekick's payload checks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { alertJson, alertText, parseAlertJson, type Alert } from '../../host/output/alert.js';

function withTz<T>(tz: string, fn: () => T): T {
  const saved = process.env.TZ;
  process.env.TZ = tz;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  }
}

// plugins/collector/README.md (Falco ~0.41), produced on a host in UTC+2.
const COLLECTOR_LINE =
  '{"hostname":"x86","output":"14:50:34.502309868: Warning Sensitive file opened for reading by non-trusted program (file=/etc/shadow gparent=sudo ggparent=zsh gggparent=kitty evt_type=openat user=root user_uid=0 user_loginuid=1000 process=cat proc_exepath=/usr/bin/cat parent=sudo command=cat /etc/shadow terminal=34820 container_id=host container_name=host)","output_fields":{"container.id":"host","container.name":"host","evt.time":1746622234502309868,"evt.type":"openat","fd.name":"/etc/shadow","proc.aname[2]":"sudo","proc.aname[3]":"zsh","proc.aname[4]":"kitty","proc.cmdline":"cat /etc/shadow","proc.exepath":"/usr/bin/cat","proc.name":"cat","proc.pname":"sudo","proc.tty":34820,"user.loginuid":1000,"user.name":"root","user.uid":0},"priority":"Warning","rule":"Read sensitive file untrusted","source":"syscall","tags":["T1555","container","filesystem","host","maturity_stable","mitre_credential_access"],"time":"2025-05-07T12:50:34.502309868Z"}';

const COLLECTOR_ALERT: Alert = {
  timeNs: 1746622234502309868n,
  rule: 'Read sensitive file untrusted',
  priority: 'Warning',
  source: 'syscall',
  // given unsorted and with a duplicate: the line has them sorted and unique (std::set)
  tags: ['mitre_credential_access', 'maturity_stable', 'host', 'filesystem', 'container', 'T1555', 'host'],
  hostname: 'x86',
  message:
    'Sensitive file opened for reading by non-trusted program (file=/etc/shadow gparent=sudo ggparent=zsh gggparent=kitty evt_type=openat user=root user_uid=0 user_loginuid=1000 process=cat proc_exepath=/usr/bin/cat parent=sudo command=cat /etc/shadow terminal=34820 container_id=host container_name=host)',
  outputFields: {
    'proc.tty': 34820,
    'user.uid': 0,
    'user.name': 'root',
    'user.loginuid': 1000,
    'proc.pname': 'sudo',
    'proc.name': 'cat',
    'proc.exepath': '/usr/bin/cat',
    'proc.cmdline': 'cat /etc/shadow',
    'proc.aname[4]': 'kitty',
    'proc.aname[3]': 'zsh',
    'proc.aname[2]': 'sudo',
    'fd.name': '/etc/shadow',
    'evt.type': 'openat',
    'container.name': 'host',
    'container.id': 'host',
  },
};

test('alertJson reproduces a real Falco JSON line byte for byte', () => {
  assert.is(
    withTz('Europe/Berlin', () => alertJson(COLLECTOR_ALERT)),
    COLLECTOR_LINE,
  );
});

test('alertJson reproduces the Deckhouse TEST_PLAN line (negative integer field, UTC host)', () => {
  const a: Alert = {
    timeNs: 1749208721382570987n,
    rule: 'Inbound SSH Connection',
    priority: 'Notice',
    source: 'syscall',
    tags: ['fstec', 'auth_attempts'],
    hostname: 'romanenko-master-0',
    message: 'Inbound SSH Connection (command=sshd pid=1298 connection=185.125.115.231:63352->10.10.0.10:22 user=root user_loginuid=-1 type=accept)',
    outputFields: {
      'evt.type': 'accept',
      'fd.name': '185.125.115.231:63352->10.10.0.10:22',
      'proc.cmdline': 'sshd',
      'proc.pid': 1298,
      'user.loginuid': -1,
      'user.name': 'root',
    },
  };
  const expected =
    '{"hostname":"romanenko-master-0","output":"11:18:41.382570987: Notice Inbound SSH Connection (command=sshd pid=1298 connection=185.125.115.231:63352->10.10.0.10:22 user=root user_loginuid=-1 type=accept)","output_fields":{"evt.time":1749208721382570987,"evt.type":"accept","fd.name":"185.125.115.231:63352->10.10.0.10:22","proc.cmdline":"sshd","proc.pid":1298,"user.loginuid":-1,"user.name":"root"},"priority":"Notice","rule":"Inbound SSH Connection","source":"syscall","tags":["auth_attempts","fstec"],"time":"2025-06-06T11:18:41.382570987Z"}';
  assert.is(
    withTz('UTC', () => alertJson(a)),
    expected,
  );
});

const base: Alert = { ...COLLECTOR_ALERT, tags: [], outputFields: { 'proc.name': 'cat' } };

test('alertText: local clock with 9 digits, priority, message; control characters and quotes escaped', () => {
  withTz('UTC', () => {
    assert.is(alertText({ ...base, timeNs: 5n, message: 'x' }), '00:00:00.000000005: Warning x');
    assert.is(alertText({ ...base, message: 'a\tb\nc "q" \\ \u0001' }), '12:50:34.502309868: Warning a\\tb\\nc \\"q\\" \\\\ \\u0001');
  });
  assert.is(
    withTz('Asia/Kolkata', () => alertText({ ...base, message: 'm' })),
    '18:20:34.502309868: Warning m',
  );
});

test('alertJson: keys in UTF-8 byte order, exact big integers, non-finite numbers as null, U+FFFD for lone surrogates', () => {
  const line = withTz('UTC', () =>
    alertJson({
      ...base,
      message: 'bad \ud800 half',
      outputFields: { '\u{1F600}': 1, '\uFFFF': 2, z: 18446744073709551615n, n: Number.NaN, list: ['b', 1, true], none: null },
    }),
  );
  const fields = line.slice(line.indexOf('"output_fields":'), line.indexOf(',"priority"'));
  assert.is(fields, '"output_fields":{"evt.time":1746622234502309868,"list":["b",1,true],"n":null,"none":null,"z":18446744073709551615,"\uFFFF":2,"\u{1F600}":1}');
  assert.ok(line.includes('"output":"12:50:34.502309868: Warning bad \uFFFD half"'));
  assert.ok(line.endsWith('"time":"2025-05-07T12:50:34.502309868Z"}'));
  assert.not.ok(line.includes('\n'));
});

test('alertJson: times before 1970 and with zero nanoseconds', () => {
  const line = withTz('UTC', () => alertJson({ ...base, timeNs: -1n }));
  assert.ok(line.includes('"time":"1969-12-31T23:59:59.999999999Z"'), line);
  assert.ok(line.includes('"output":"23:59:59.999999999: Warning'), line);
  assert.ok(withTz('UTC', () => alertJson({ ...base, timeNs: 1_000_000_000n })).includes('"time":"1970-01-01T00:00:01.000000000Z"'));
});

test('parseAlertJson reads a real Falco line back into the same alert', () => {
  const r = withTz('Europe/Berlin', () => parseAlertJson(COLLECTOR_LINE));
  if (!r.ok) throw new Error(r.error);
  const want = { ...COLLECTOR_ALERT, tags: ['T1555', 'container', 'filesystem', 'host', 'maturity_stable', 'mitre_credential_access'] };
  assert.equal(r.alert, want);
  assert.is(
    withTz('Europe/Berlin', () => alertJson(r.alert)),
    COLLECTOR_LINE,
  );
});

const OK_BODY = { priority: 'Debug', rule: 'r', time: '2024-01-02T03:04:05Z', output_fields: { 'proc.name': 'x' } };
const body = (patch: Record<string, unknown>) => JSON.stringify({ ...OK_BODY, ...patch });

// falcosidekick's decisions (reference §4, "verified by running"), with our reasons.
const CASES: Array<[string, string, string | null]> = [
  ['priority INFO is accepted', body({ priority: 'INFO' }), null],
  ['unknown priority', body({ priority: 'severe' }), 'priority "severe" is not one of Emergency, Alert, Critical, Error, Warning, Notice, Informational, Debug'],
  ['numeric priority', body({ priority: 4 }), 'priority must be a string'],
  ['missing priority', body({ priority: undefined }), 'priority is missing'],
  ['missing rule', body({ rule: undefined }), 'rule is missing'],
  ['empty rule', body({ rule: '' }), 'rule is missing'],
  ['rule not a string', body({ rule: 7 }), 'rule must be a string'],
  ['missing time', body({ time: undefined }), 'time is missing'],
  ['naive time (no zone)', body({ time: '2024-01-02T03:04:05' }), 'time "2024-01-02T03:04:05" is not an RFC 3339 date-time with a zone'],
  ['impossible date', body({ time: '2023-02-29T00:00:00Z' }), 'time "2023-02-29T00:00:00Z" is not an RFC 3339 date-time with a zone'],
  ['Go zero time', body({ time: '0001-01-01T00:00:00Z' }), 'time is missing'],
  ['empty output_fields', body({ output_fields: {} }), 'output_fields is missing or empty'],
  ['missing output_fields', body({ output_fields: undefined }), 'output_fields is missing or empty'],
  ['output_fields not an object', body({ output_fields: [1] }), 'output_fields must be an object'],
  ['tags not strings', body({ tags: ['a', 1] }), 'tags must be a list of strings'],
  ['JSON array body', JSON.stringify([OK_BODY]), 'body must be a JSON object'],
  ['empty body', '', 'empty body'],
  ['whitespace body', ' \n', 'empty body'],
  ['not JSON', 'rule=x', 'invalid JSON: unexpected character "r" at offset 0'],
  ['truncated JSON', '{"rule":"x"', "invalid JSON: expected ',' or '}' in an object at offset 11"],
  ['bad escape', '{"rule":"\\q"}', 'invalid JSON: invalid string (bad escape or control character) at offset 8'],
  ['trailing garbage after the first value is ignored', `${body({})} xyz`, null],
  ['unknown keys are ignored; null optional strings read as empty', body({ extra: { a: 1 }, hostname: null, source: null }), null],
];

for (const [name, text, error] of CASES) {
  test(`parseAlertJson: ${name}`, () => {
    const r = parseAlertJson(text);
    if (error === null) assert.ok(r.ok, r.ok ? '' : r.error);
    else assert.equal(r, { ok: false, error });
  });
}

test('parseAlertJson: prefix stripped from output, evt.time dropped, offsets applied, nested values kept as JSON text', () => {
  const r = parseAlertJson(
    body({
      time: '2024-01-02T05:04:05.123456789+02:00',
      output: '03:04:05.123456789: Debug hello world',
      output_fields: { 'evt.time': 1704164645123456789n.toString(), big: 1, nested: { b: 1, a: [null] } },
      tags: ['b', 'a', 'b'],
    }).replace('"1704164645123456789"', '1704164645123456789'),
  );
  if (!r.ok) throw new Error(r.error);
  assert.is(r.alert.timeNs, 1704164645123456789n);
  assert.is(r.alert.message, 'hello world');
  assert.equal(r.alert.outputFields, { big: 1, nested: '{"a":[null],"b":1}' });
  assert.equal(r.alert.tags, ['a', 'b']);
  assert.is(r.alert.priority, 'Debug');
  assert.is(r.alert.hostname, '');
  assert.is(r.alert.source, '');
});

const fieldValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d)),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxLength: 4 }),
);
const plainText = fc.string({ unit: fc.constantFrom(...'abc XYZ-_=()/.:0123456789éж€'.split('')) });
const alertArb = fc
  .record({
    timeNs: fc.bigInt({ min: 0n, max: 4_102_444_800n * 1_000_000_000n }),
    rule: plainText.filter((s) => s.length > 0),
    priority: fc.constantFrom('Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug' as const),
    source: fc.constantFrom('syscall', 'k8s_audit', 'internal'),
    tags: fc.uniqueArray(plainText, { maxLength: 5 }).map((t) => [...t].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))),
    hostname: plainText,
    message: plainText,
    outputFields: fc.dictionary(
      fc.string().filter((k) => k !== 'evt.time' && k !== '__proto__'),
      fieldValue,
      { minKeys: 1, maxKeys: 6 },
    ),
  })
  .map((r) => ({ ...r, outputFields: { ...r.outputFields } }) as Alert); // plain objects, as the engine builds them

test('property: parseAlertJson(alertJson(a)) gives back a (JSON.parse agrees on the text)', () => {
  fc.assert(
    fc.property(alertArb, (a) => {
      const line = alertJson(a);
      const r = parseAlertJson(line);
      if (!r.ok) return false;
      assert.equal(r.alert, a);
      const plain = JSON.parse(line) as { output_fields: Record<string, unknown>; time: string };
      assert.is(Object.keys(plain.output_fields).length, Object.keys(a.outputFields).length + 1);
      return true;
    }),
    { numRuns: 300 },
  );
});

test.run();
